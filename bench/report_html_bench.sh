#!/usr/bin/env bash
# Size and render time of report.html for the 1,200-trajectory fairness example (issue 12:
# under 2 MB, drawn in under 2 s in headless Chromium). Measures; asserts nothing (the size is
# asserted by the test ReportHtmlBrowser.FairMedAgentAuditForestPlotAndSize).
#   bench/report_html_bench.sh [build/ci/noisefloor]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build/ci/noisefloor}"
export NOISEFLOOR_DATA="${NOISEFLOOR_DATA:-../shared/data}"  # the example reads the real vignettes
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" audit examples/fairmedagent-audit.yaml --out "$out/fma" 2>"$out/audit.log" || { cat "$out/audit.log"; exit 2; }
size=$(stat -c %s "$out/fma/report.html")
echo "report.html: $size bytes ($(( size / 1024 )) KiB)"
# --timeout (real time), not --virtual-time-budget, so data-nf-ms is wall-clock time in the page.
for i in 1 2 3; do
  start=$(date +%s.%N)
  status=$(chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$out/profile$i" \
    --timeout=8000 --dump-dom "file://$out/fma/report.html" 2>/dev/null |
    grep -o 'data-nf-[a-z]*="[^"]*"' | tr '\n' ' ')
  end=$(date +%s.%N)
  echo "run $i: $status chromium process wall $(echo "$end - $start" | bc) s"
done
