"""Iterates every record of a WARC.gz and reads its payload, with warcio or FastWARC (PyPI),
as scripts/bench/warc/run times them beside `rip-warc read`.

    python iterate.py warcio|fastwarc FILE COUNT-FILE     (writes the record count there)
"""

import sys


def with_warcio(path):
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with open(path, "rb") as f:
        for record in ArchiveIterator(f):
            record.content_stream().read()  # the HTTP payload, de-chunked and decoded
            n += 1
    return n


def with_fastwarc(path):
    from fastwarc.warc import ArchiveIterator

    n = 0
    # FastWARC 2 (in Rust): given a path, it opens the file and detects the gzip itself.
    for record in ArchiveIterator(path, parse_http=True):
        record.reader.read()  # the HTTP payload (its headers parsed)
        n += 1
    return n


def main():
    tool, path, count_file = sys.argv[1:4]
    n = {"warcio": with_warcio, "fastwarc": with_fastwarc}[tool](path)
    with open(count_file, "w") as f:
        f.write(f"{n}\n")


if __name__ == "__main__":
    main()
