"""HLO-to-HLO passes: the OpExpanderPass driver, the pipeline, and spec 000's two expanders.

Contract: every pass is an `HloPass` whose `run(module)` rewrites the module in place and
returns whether it changed anything; `PASS_REGISTRY` (in `pass_base`) lists the passes the
`tilecc hlo-opt --passes=...` flag accepts, by CLI name or by the spec's registry name.
"""
