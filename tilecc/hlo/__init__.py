"""XLA HLO for tilecc: types, opcodes, IR, text parser / printer, verifier and builders.

Import the pieces from their modules (`tilecc.hlo.ir`, `tilecc.hlo.parser`, ...); this
package imports nothing heavy so that `import tilecc.hlo` stays cheap.
"""
