from hindcast.cli import run

run()
