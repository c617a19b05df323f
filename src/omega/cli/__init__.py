"""The `omega` command line: `main` builds the typer app (cli.main) with its command groups
(cli.ops with cli.setup, cli.evolution, cli.quant); cli.support is what every command shares."""
