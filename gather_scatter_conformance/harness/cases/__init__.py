"""Case files: what a case can say (operators, element types), loading and validating YAML into cases, input values and
generators, and the parse cache."""
