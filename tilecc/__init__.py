"""tilecc: reduction and collective lowering for 128-partition tile accelerators.

Three IR levels, one package each: XLA HLO (`tilecc.hlo`, passes in `tilecc.passes`),
KLR -> BIR (`tilecc.klr`, `tilecc.bir`, `tilecc.codegen`, simulator `tilecc.sim`) and the
host orchestration DSL (`tilecc.host`). Importing the package is cheap: nothing heavy
(jax, the parsers) is imported until used.
"""

__version__ = "0.1.0"
