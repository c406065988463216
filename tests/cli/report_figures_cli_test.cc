// The tester's four reports (s9 finding 21), audited from the shipped examples: every figure of
// figures.json passes the label/interval/legend/caption checks (common/figure_checks.h); the
// envelope's "Score per configuration" table, which its figure's caption names, is in report.md
// and report.html. With headless Chromium, the drawn SVG is read back: no two legend entries of
// a figure render the same text and Vega cut no axis or legend label ("…" at the end).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/figure_checks.h"
#include "common/test_data.h"

namespace nf {
namespace {

using nlohmann::json;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

std::string example(const std::string& name) { return std::string(NF_SOURCE_DIR) + "/examples/" + name + ".yaml"; }

// Each example is audited once per test process (ctest runs each test in its own).
class ReportFiguresCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new TempDir(); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The report directory of `name`, audited on first use.
  static std::string out(const std::string& name) {
    const std::string o = *dir_ / name;
    if (!std::filesystem::exists(o + "/figures.json")) {
      const auto r = run_cli("audit " + example(name) + " --quiet --out " + o + " --store " + *dir_ / (name + ".sqlite"),
                             dir_->path(), testing::data_env());
      EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    }
    return o;
  }
  static json figures(const std::string& name) {
    return json::parse(slurp(out(name) + "/figures.json"), nullptr, false);
  }
  static TempDir* dir_;
};
TempDir* ReportFiguresCli::dir_ = nullptr;

// Checks each figure with per-point marks; returns how many.
int check_all(const json& figures) {
  int n = 0;
  for (const auto& f : figures.value("figures", json::array())) {
    const json& rows = f["spec"]["data"][0].value("values", json::array());
    if (rows.empty() || !rows[0].contains("mark")) continue;  // fairness flips, kappa matrix: own marks
    testing::check_figure(f);
    ++n;
  }
  return n;
}

TEST_F(ReportFiguresCli, TheTestersFourReportsPassTheFigureChecksAndCarryTheTablesTheyName) {
  const std::pair<const char*, int> examples[] = {
      {"medagentbench-rerun", 1}, {"medqa-floor", 3}, {"envelope", 2}, {"sample-agent-audit", 4}};
  for (const auto& [name, want] : examples) {
    SCOPED_TRACE(name);
    const json f = figures(name);
    ASSERT_FALSE(f.is_discarded());
    EXPECT_EQ(check_all(f), want);
  }
  // The envelope-scores caption names a table: report.md and report.html carry it.
  const json f = figures("envelope");
  const std::string dir = out("envelope");
  std::string caption;
  for (const auto& fig : f["figures"])
    if (fig["id"] == "envelope-scores") caption = fig["caption"];
  EXPECT_NE(caption.find("\"Score per configuration\""), std::string::npos) << caption;
  const std::string md = slurp(dir + "/report.md");
  const std::string html = slurp(dir + "/report.html");
  EXPECT_NE(md.find("Score per configuration (each subject's score"), std::string::npos);
  EXPECT_NE(html.find("Score per configuration (each subject's score"), std::string::npos);
  // One row per (configuration, subject): 12 configurations x 3 subjects.
  const auto results = json::parse(slurp(dir + "/results.json"));
  size_t cells = 0;
  for (const auto& s : results["analyses"]["envelope"]["subjects"]) {
    for (const auto& c : s["cells"]) {
      ++cells;
      const std::string row = "| " + c["config"].get<std::string>() + " | " + s["subject"].get<std::string>() + " | ";
      EXPECT_NE(md.find(row), std::string::npos) << row;
    }
  }
  EXPECT_EQ(cells, 36u);
}

std::string chromium_path() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    FILE* p = popen((std::string("command -v ") + name + " 2>/dev/null").c_str(), "r");
    if (p == nullptr) continue;
    char buf[512] = {0};
    const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
    pclose(p);
    std::string s = got ? std::string(buf) : std::string();
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    if (!s.empty()) return s;
  }
  return "";
}

// The texts of one SVG role (e.g. "role-legend-label") inside figure `id` of the drawn page.
std::vector<std::string> svg_texts(const std::string& dom, const std::string& id, const std::string& role) {
  std::vector<std::string> out;
  const size_t at = dom.find("id=\"nf-fig-" + id + "\"");
  if (at == std::string::npos) return out;
  const std::string fig = dom.substr(at, dom.find("</figure>", at) - at);
  const std::regex group("class=\"mark-text " + role + "\"[^>]*>((<text[^>]*>[^<]*</text>)*)");
  const std::regex text("<text[^>]*>([^<]*)</text>");
  for (auto g = std::sregex_iterator(fig.begin(), fig.end(), group); g != std::sregex_iterator(); ++g) {
    const std::string inner = (*g)[1].str();
    for (auto t = std::sregex_iterator(inner.begin(), inner.end(), text); t != std::sregex_iterator(); ++t)
      out.push_back((*t)[1].str());
  }
  return out;
}

TEST_F(ReportFiguresCli, DrawnLegendsAndAxisLabelsAreWholeAndDistinct) {
  if (chromium_path().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps)";
  if (!std::filesystem::exists("/usr/share/javascript/vega/vega-view.min.js") &&
      std::getenv("NOISEFLOOR_VEGA_DIR") == nullptr)
    GTEST_SKIP() << "Vega is not installed (Debian package libjs-vega; scripts/install-deps)";
  // One page load per report; the figures the tester named.
  const std::pair<const char*, std::vector<std::string>> cases[] = {
      {"medagentbench-rerun", {"rerun-metrics"}},
      {"medqa-floor", {"majority-floor-curve", "floor-intervals"}}};
  for (const auto& [name, ids] : cases) {
    SCOPED_TRACE(name);
    TempDir profile;
    const std::string cmd = "timeout 120 " + chromium_path() +
                            " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + profile.path() +
                            " --window-size=1200,1000 --virtual-time-budget=15000 --dump-dom 'file://" +
                            out(name) + "/report.html" + "' 2>/dev/null >" + profile.path() + "/dom.html";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const std::string dom = slurp(profile.path() + "/dom.html");
    ASSERT_NE(dom.find("data-nf-status=\"ok: "), std::string::npos) << dom.substr(0, 300);
    for (const auto& id : ids) {
      SCOPED_TRACE(id);
      const auto legend = svg_texts(dom, id, "role-legend-label");
      const auto axis = svg_texts(dom, id, "role-axis-label");
      EXPECT_FALSE(axis.empty());
      const std::set<std::string> distinct(legend.begin(), legend.end());
      EXPECT_EQ(distinct.size(), legend.size()) << "two legend entries render the same text";
      for (const auto& t : legend) EXPECT_FALSE(t.size() >= 3 && t.compare(t.size() - 3, 3, "…") == 0) << t;
      for (const auto& t : axis) EXPECT_FALSE(t.size() >= 3 && t.compare(t.size() - 3, 3, "…") == 0) << t;
    }
  }
}

}  // namespace
}  // namespace nf
