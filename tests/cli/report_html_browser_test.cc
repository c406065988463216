// report.html checked in a real browser (issue 12): each example's report is rendered by headless
// Chromium; the page itself reports "ok: N figures" on <html data-nf-status> once every Vega figure
// has drawn marks, or "error: ..." on any script error, console.error or empty figure
// (report/html.h). A PNG screenshot of each page is kept under <build>/artifacts/report-html/.
// Skips, saying why, when chromium (Debian package chromium) or Vega (libjs-vega) is absent;
// scripts/install-deps installs both, so CI runs it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "common/process.h"
#include "common/test_data.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::slurp;
using testing::TempDir;

std::string chromium_path() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string cmd = std::string("command -v ") + name + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) continue;
    char buf[512] = {0};
    const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
    pclose(p);
    if (got) {
      std::string s(buf);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      if (!s.empty()) return s;
    }
  }
  return "";
}

std::string artifacts_dir() {
  const auto dir = std::filesystem::path(NF_BINARY).parent_path() / "artifacts" / "report-html";
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Renders `html` (with an optional #fragment) in headless Chromium, saves a screenshot to
// artifacts/<name>.png and returns the page's data-nf-status ("" if the page never set it).
std::string render(const std::string& html, const std::string& name, const std::string& fragment = "",
                   int height = 1600) {
  TempDir profile;
  const std::string png = artifacts_dir() + "/" + name + ".png";
  std::filesystem::remove(png);
  const std::string cmd = "timeout 120 " + chromium_path() +
                          " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
                          " --user-data-dir=" + profile.path() + " --window-size=1280," + std::to_string(height) +
                          " --virtual-time-budget=15000 --screenshot=" + png + " --dump-dom 'file://" + html +
                          fragment + "' 2>" + profile.path() + "/stderr.txt >" + profile.path() + "/dom.html";
  const int st = std::system(cmd.c_str());
  EXPECT_EQ(st, 0) << cmd << "\n" << slurp(profile.path() + "/stderr.txt");
  EXPECT_TRUE(std::filesystem::exists(png)) << "no screenshot " << png;
  if (std::filesystem::exists(png)) {
    EXPECT_GT(std::filesystem::file_size(png), 10000u) << png;
  }
  std::smatch m;
  const std::string dom = slurp(profile.path() + "/dom.html");
  static const std::regex kStatus("data-nf-status=\"([^\"]*)\"");
  return std::regex_search(dom, m, kStatus) ? m[1].str() : std::string();
}

// Skips unless the browser and the charting library are installed.
#define NF_REQUIRE_BROWSER()                                                                        \
  do {                                                                                              \
    if (chromium_path().empty())                                                                    \
      GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/install-deps)"; \
    if (!std::filesystem::exists("/usr/share/javascript/vega/vega-view.min.js") &&                 \
        std::getenv("NOISEFLOOR_VEGA_DIR") == nullptr)                                             \
      GTEST_SKIP() << "Vega is not installed (Debian package libjs-vega; scripts/install-deps)";   \
  } while (0)

// Expects "ok: N figures" with N >= min_figures.
void expect_ok(const std::string& status, int min_figures, const std::string& name) {
  static const std::regex kOk("ok: ([0-9]+) figures");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(status, m, kOk)) << name << ": page status '" << status << "'";
  EXPECT_GE(std::stoi(m[1].str()), min_figures) << name;
}

std::string example(const std::string& name) { return std::string(NF_SOURCE_DIR) + "/examples/" + name + ".yaml"; }

void audit_and_render(const std::string& name, int min_figures) {
  TempDir tmp;
  const auto r = run_cli("audit " + example(name) + " --out " + tmp / "out", tmp.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = tmp / "out/report.html";
  ASSERT_TRUE(std::filesystem::exists(html)) << r.err;
  ASSERT_TRUE(std::filesystem::exists(tmp / "out/figures.json"));
  expect_ok(render(html, name), min_figures, name);
}

TEST(ReportHtmlBrowser, SampleFloor) {
  NF_REQUIRE_BROWSER();
  audit_and_render("sample-floor", 3);
}

TEST(ReportHtmlBrowser, SampleAgentAudit) {
  NF_REQUIRE_BROWSER();
  audit_and_render("sample-agent-audit", 5);
}

// The FHIR rerun audit (seed 002): the metrics-per-arm figure; the envelope (seed 003):
// rho_flip per pair and scores per configuration.
TEST(ReportHtmlBrowser, MedAgentBenchRerun) {
  NF_REQUIRE_BROWSER();
  audit_and_render("medagentbench-rerun", 1);
}

TEST(ReportHtmlBrowser, Envelope) {
  NF_REQUIRE_BROWSER();
  audit_and_render("envelope", 2);
}

TEST(ReportHtmlBrowser, ChatProbe) {
  NF_REQUIRE_BROWSER();
  audit_and_render("chat-probe", 2);
}

// The 1,200-trajectory fairness example: the page stays under 2 MB (issue 12; checked with or
// without a browser) and the forest plot of flip rates against the floor draws (screenshot
// fairmedagent-audit-forest.png).
TEST(ReportHtmlBrowser, FairMedAgentAuditForestPlotAndSize) {
  TempDir tmp;
  const auto r =
      run_cli("audit " + example("fairmedagent-audit") + " --out " + tmp / "out", tmp.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = tmp / "out/report.html";
  EXPECT_LT(std::filesystem::file_size(html), 2u * 1000 * 1000) << "report.html of the fairness example";
  EXPECT_NE(slurp(html).find("id=\"nf-fig-fairness-0-flips\""), std::string::npos);
  NF_REQUIRE_BROWSER();
  expect_ok(render(html, "fairmedagent-audit"), 6, "fairmedagent-audit");
  expect_ok(render(html, "fairmedagent-audit-forest", "#only=fairness-0-flips", 900), 6, "forest");
}

// The released judge votes and clinician labels (seed 004), imported, not run.
TEST(ReportHtmlBrowser, ImportedMissingInfoJudges) {
  NF_REQUIRE_BROWSER();
  TempDir tmp;
  const std::string dir = testing::data_dir() + "/missing-info-judges";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir << " (set NOISEFLOOR_DATA)";
  auto r = run_cli("import missing-info " + dir + " --store " + tmp / "mi.sqlite", tmp.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("analyze --store " + tmp / "mi.sqlite --out " + tmp / "out", tmp.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_ok(render(tmp / "out/report.html", "missing-info-judges"), 3, "missing-info");
  expect_ok(render(tmp / "out/report.html", "missing-info-judges-kappa", "#only=human-validity-kappa", 700), 3,
            "kappa");
}

// A page whose figure cannot draw must fail the check: the same report with a Vega spec broken
// on purpose reports "error: ..." (so the test above cannot pass on a page that shows nothing).
TEST(ReportHtmlBrowser, BrokenFigureIsReported) {
  NF_REQUIRE_BROWSER();
  TempDir tmp;
  const auto r = run_cli("audit " + example("sample-floor") + " --out " + tmp / "out", tmp.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = slurp(tmp / "out/report.html");
  const std::string needle = "\"type\":\"linear\"";
  const size_t at = html.find(needle);
  ASSERT_NE(at, std::string::npos);
  html.replace(at, needle.size(), "\"type\":\"no-such-scale\"");
  testing::write_text(tmp / "broken.html", html);
  const std::string status = render(tmp / "broken.html", "broken-on-purpose", "", 400);
  EXPECT_EQ(status.rfind("error: ", 0), 0u) << status;
}

}  // namespace
}  // namespace nf
