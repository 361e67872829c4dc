"""Command groups of the CLI, one module each; importing a module registers its commands.

Modules here import only typer at module level: the work they wire is imported inside each
command, so ``clusterdx --help`` stays fast.
"""

COMMAND_MODULES = ("kb", "collect", "triage", "check", "fleet")
