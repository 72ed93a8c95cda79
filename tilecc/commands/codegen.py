"""`tilecc codegen KERNEL.klr.json [-o OUT.bir.json]`: lower a KLR kernel to verified BIR JSON.

Contract: reads KLR JSON (HEAD form or the klr 0.0.12 tool's), runs KlirToBirCodegen and the
BIR verifier, and writes the program as indented BIR JSON to OUT (default stdout), or with
`--format=text` a readable listing (tilecc/bir/listing.py). Any bad input is one error line
and exit 1 -- a BIR program, a Python file or an HLO module is named as such, with the
command that takes it (commands/stages.py); the output file is written atomically, so a
failure never leaves a partial file.
`--html R.html` also writes the kernel report page (KLR and BIR side by side, linked to the
kernel source named by the operators' positions).
"""

from __future__ import annotations

import argparse
import gc

from tilecc.bir.json import write_program_json
from tilecc.bir.listing import format_program
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import KlirToBirCodegen
from tilecc.commands.stages import refuse_wrong_stage
from tilecc.errors import CodegenError, VerifyError
from tilecc.fileio import refuse_overwriting, write_text_atomic
from tilecc.klr.read import read_kernel_file

HELP = "lower a KLR kernel (JSON) to BIR JSON, verified"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kernel",
                        help="KLR kernel as JSON (KLR HEAD or klr 0.0.12 form); - = stdin")
    parser.add_argument("-o", "--output", default="-", help="BIR JSON output file (default stdout)")
    parser.add_argument("--format", choices=["json", "text"], default="json",
                        help="BIR JSON (default) or a readable listing")
    parser.add_argument("--html", metavar="REPORT.html", help="also write the kernel report page")


def run(args: argparse.Namespace) -> int:
    # The pipeline allocates millions of acyclic objects; without pausing the cyclic
    # collector its repeated scans cost more than the work itself on large kernels.
    refuse_wrong_stage(args.kernel, "codegen")
    refuse_overwriting(args.output, args.kernel, "KLR kernel")
    gc.disable()
    try:
        kernel = read_kernel_file(args.kernel)
        try:
            program = KlirToBirCodegen().codegen_kernel(kernel)
            verify_program(program)
        except (CodegenError, VerifyError) as err:   # a fault of the kernel: name its file
            path = "<stdin>" if args.kernel == "-" else args.kernel
            raise type(err)(f"{path}: {err}") from None
        text = format_program(program) if args.format == "text" \
            else write_program_json(program, pretty=True) + "\n"
    finally:
        gc.enable()
    write_text_atomic(args.output, text)
    if args.html:
        from tilecc.viz.kernel_report import write_kernel_page
        write_kernel_page(args.html, kernel)
    return 0
