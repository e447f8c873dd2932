"""What a reader sees: the behaviour tables (``behaviour``, ``rows``, ``documented``), the documentation registry
(``claims``), repro scripts (``repro``), two runs compared (``rundiff``), and the HTML page (``page``, ``build``,
``drilldown``, ``templates/``). Only ``page`` needs the ``report`` extra (jinja2, pandas): this package's top level
imports nothing, so the pytest plugin can use ``repro`` without it.
"""
