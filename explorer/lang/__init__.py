"""The language: a spec's text to a checked syntax tree (grammar, parser, checks, kinds) to a
`Model` of compiled Python functions (compiler, model), the values it computes with and the
operations compiled code calls (values, runtime), and named configurations (config)."""
