"""MarkItDown on the files named in a JSON list; writes {"seconds": {path: conversion time}, "outputs": {path: markdown}}.

Time counts conversions only (import and constructor excluded), in this one process, one file after another.
Used by bench/documents.ts; run with the virtualenv it installs.
"""
import json
import sys
import time

from markitdown import MarkItDown

files = json.load(open(sys.argv[1]))
converter = MarkItDown()
outputs = {}
seconds = {}
for path in files:
    started = time.perf_counter()
    try:
        outputs[path] = converter.convert(path).text_content
    except Exception as error:  # a failure scores as empty output
        outputs[path] = ""
        print(f"markitdown failed on {path}: {error}", file=sys.stderr)
    seconds[path] = time.perf_counter() - started
json.dump({"seconds": seconds, "outputs": outputs}, open(sys.argv[2], "w"))
