"""What a reader sees: the behaviour tables (``behaviour``, ``rows``, ``documented``), the documentation registry
(``claims``), two runs compared (``rundiff``), and the HTML page (``page``, ``build``, ``drilldown``,
``templates/``), with each finding's repro script (written by harness.run.repro, which the pytest plugin's failure
messages use too). Only ``page`` needs the ``report`` extra (jinja2, pandas): this package's top level imports
nothing.
"""
