#!/usr/bin/env python
"""Add verified response templates to many Hub tokenizer repos: ``hf-response-templates upgrade-hub`` from a
checkout (the code is ``hf_response_templates/bulk.py``; see its docstring and ``--help``)."""

from __future__ import annotations

import sys

from hf_response_templates.bulk import *  # noqa: F403  (the script's former module namespace)
from hf_response_templates.bulk import main

if __name__ == "__main__":
    sys.exit(main())
