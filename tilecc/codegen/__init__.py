"""KLR -> BIR codegen of the compute family (spec 003): enum crosswalks and leaves."""
