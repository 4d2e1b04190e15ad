"""`python -m bytepair` runs the command line."""

from bytepair.cli import main

main(prog_name="bytepair")
