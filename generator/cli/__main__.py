"""python -m generator.cli: the riskapi command."""
from . import run

run()
