"""``python -m insika_knowledge``: the same command line as ``insika-knowledge``."""

from insika_knowledge.console import main

if __name__ == "__main__":
    main()
