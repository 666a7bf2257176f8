from hindcast.cli.main import run

run()
