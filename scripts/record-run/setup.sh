#!/usr/bin/env bash
# Prepare what scripts/record-run/run_upstream.py needs, outside the project:
#   /tmp/mt      upstream MiroThinker at 1c4253f6774b (apps/miroflow-agent, libs/miroflow-tools)
#   /tmp/mtvenv  Python 3.12 (upstream requires >= 3.12) with upstream's pinned versions (its
#                uv.lock) of the packages its orchestrator, client and task log import
# Usage: scripts/record-run/setup.sh [UPSTREAM_GIT_DIR]
# UPSTREAM_GIT_DIR: a clone of MiroMindAI/MiroThinker that has commit 1c4253f6774b.
set -euo pipefail
UPSTREAM_GIT=${1:-/work/.mirror/MiroMindAI+MiroThinker/repo}
COMMIT=1c4253f6774b
PY=${PYTHON312:-$(command -v python3.12 || echo /root/.pyenv/versions/3.12.1/bin/python)}

rm -rf /tmp/mt && mkdir -p /tmp/mt
git -C "$UPSTREAM_GIT" archive "$COMMIT" apps/miroflow-agent libs/miroflow-tools | tar -x -C /tmp/mt
[ -d /tmp/mtvenv ] || "$PY" -m venv /tmp/mtvenv
/tmp/mtvenv/bin/pip install -q \
  openai==1.93.0 anthropic==0.56.0 httpx==0.28.1 pydantic==2.11.7 \
  omegaconf==2.3.0 hydra-core==1.3.2 json-repair==0.50.0 mcp==1.10.1 tenacity==9.1.2 \
  tiktoken==0.9.0 colorama==0.4.6 python-dotenv==1.1.1 beautifulsoup4==4.13.4 \
  mammoth==1.9.1 markdownify==1.1.0 pdfminer.six==20250506 python-pptx==1.0.2 \
  openpyxl==3.1.5 markitdown==0.1.2
PYTHONPATH=/tmp/mt/apps/miroflow-agent:/tmp/mt/libs/miroflow-tools/src \
  /tmp/mtvenv/bin/python -W ignore -c "import src.core.pipeline, src.llm.providers.openai_client; print('upstream imports: ok')"
