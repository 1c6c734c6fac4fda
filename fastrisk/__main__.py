import sys

try:
    from fastrisk.cli import main  # run as `python -m fastrisk` only
except KeyboardInterrupt:  # Ctrl-C during the imports (a second or two): the CLI's status and message
    print("fastrisk: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
