// `noisefloor stats` entries for the statistics core: proportions, paired tests,
// resampling, multiplicity, rank correlation and planning. Each entry parses its own
// words, calls src/stats and prints estimate / interval / p-value / method (text or JSON).
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "stats/bootstrap.h"
#include "stats/multiplicity.h"
#include "stats/paired.h"
#include "stats/planning.h"
#include "stats/proportion.h"
#include "stats/rank.h"
#include "util/exit_code.h"
#include "util/file.h"
#include "util/strings.h"

namespace nf::cli {

namespace {

// ---- argument parsing ------------------------------------------------------------

struct Parsed {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // --name value
  std::set<std::string> flags;                // --name
};

// `value_opts` take one value; `flag_opts` take none; anything else starting with "--"
// is an error. A word such as "-0.5" is positional.
Result<Parsed> parse_args(const std::vector<std::string>& args, const std::set<std::string>& value_opts,
                          const std::set<std::string>& flag_opts) {
  Parsed p;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (starts_with(a, "--")) {
      std::string name = a.substr(2), value;
      const size_t eq = name.find('=');
      const bool inline_value = eq != std::string::npos;
      if (inline_value) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      if (value_opts.count(name)) {
        if (!inline_value) {
          if (i + 1 >= args.size()) return InvalidArgument("option --" + name + " needs a value");
          value = args[++i];
        }
        p.values[name] = value;
      } else if (flag_opts.count(name) && !inline_value) {
        p.flags.insert(name);
      } else {
        std::vector<std::string> known(value_opts.begin(), value_opts.end());
        known.insert(known.end(), flag_opts.begin(), flag_opts.end());
        return InvalidArgument("unknown option --" + name + did_you_mean(name, known));
      }
    } else {
      p.positional.push_back(a);
    }
  }
  return p;
}

Result<double> parse_double(const std::string& what, const std::string& s) {
  // Accepts "0.25" and fractions "374/4320".
  const size_t slash = s.find('/');
  if (slash != std::string::npos) {
    NF_ASSIGN_OR_RETURN(const double num, parse_double(what, s.substr(0, slash)));
    NF_ASSIGN_OR_RETURN(const double den, parse_double(what, s.substr(slash + 1)));
    if (den == 0.0) return InvalidArgument(what + ": '" + s + "' divides by zero");
    return num / den;
  }
  const std::string t = trim(s);
  if (t.empty()) return InvalidArgument(what + ": empty value");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || errno == ERANGE) {
    return InvalidArgument(what + ": '" + s + "' is not a number");
  }
  return v;
}

Result<int64_t> parse_int(const std::string& what, const std::string& s) {
  const std::string t = trim(s);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE) {
    return InvalidArgument(what + ": '" + s + "' is not an integer");
  }
  return static_cast<int64_t>(v);
}

Status want_positional(const Parsed& p, size_t min, size_t max, const std::string& usage) {
  if (p.positional.size() < min || p.positional.size() > max) {
    return InvalidArgument("expected " + (min == max ? std::to_string(min) : std::to_string(min) + "-" + std::to_string(max)) +
                           " argument(s), got " + std::to_string(p.positional.size()) + "; usage: " + usage);
  }
  return Status::Ok();
}

double opt_double(const Parsed& p, const std::string& name, double def, Status& st) {
  auto it = p.values.find(name);
  if (it == p.values.end()) return def;
  auto v = parse_double("--" + name, it->second);
  if (!v.ok()) { st = v.status(); return def; }
  return *v;
}

int64_t opt_int(const Parsed& p, const std::string& name, int64_t def, Status& st) {
  auto it = p.values.find(name);
  if (it == p.values.end()) return def;
  auto v = parse_int("--" + name, it->second);
  if (!v.ok()) { st = v.status(); return def; }
  return *v;
}

// Reads the first two numeric columns of a CSV file; a first line that does not parse
// as numbers is taken as a header. Errors name the file and line.
Result<std::pair<std::vector<double>, std::vector<double>>> read_two_columns(const std::string& path) {
  NF_ASSIGN_OR_RETURN(const std::string text, read_file(path));
  std::pair<std::vector<double>, std::vector<double>> out;
  const auto lines = split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split(line, ',');
    if (cells.size() < 2) {
      return InvalidArgument(fmt::format("{}:{}: expected at least two comma-separated columns", path, i + 1));
    }
    auto a = parse_double("column 1", cells[0]);
    auto b = parse_double("column 2", cells[1]);
    if (!a.ok() || !b.ok()) {
      if (out.first.empty() && i == 0) continue;  // header
      return InvalidArgument(fmt::format("{}:{}: {}", path, i + 1, (!a.ok() ? a : b).status().message()));
    }
    out.first.push_back(*a);
    out.second.push_back(*b);
  }
  if (out.first.empty()) return InvalidArgument(path + ": no data rows");
  return out;
}

Result<std::pair<std::vector<int>, std::vector<int>>> read_binary_pairs(const std::string& path) {
  NF_ASSIGN_OR_RETURN(const auto cols, read_two_columns(path));
  std::pair<std::vector<int>, std::vector<int>> out;
  for (size_t i = 0; i < cols.first.size(); ++i) {
    const double a = cols.first[i], b = cols.second[i];
    if ((a != 0.0 && a != 1.0) || (b != 0.0 && b != 1.0)) {
      return InvalidArgument(fmt::format("{}: data row {} has a value other than 0/1", path, i + 1));
    }
    out.first.push_back(static_cast<int>(a));
    out.second.push_back(static_cast<int>(b));
  }
  return out;
}

// ---- output ----------------------------------------------------------------------

struct Report {
  std::string test;
  std::string method;
  std::string input;  // e.g. "18/100"
  std::optional<double> estimate;
  std::optional<std::pair<double, double>> interval;
  double level = 0.95;
  std::optional<double> p_value;
  nlohmann::json extra = nlohmann::json::object();  // further named values
};

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

int print(const Report& r, bool json) {
  if (json) {
    nlohmann::json j;
    j["test"] = r.test;
    j["method"] = r.method;
    j["input"] = r.input;
    j["estimate"] = r.estimate ? num(*r.estimate) : nlohmann::json(nullptr);
    if (r.interval) {
      j["interval"] = {num(r.interval->first), num(r.interval->second)};
      j["level"] = r.level;
    } else {
      j["interval"] = nullptr;
    }
    j["p_value"] = r.p_value ? num(*r.p_value) : nlohmann::json(nullptr);
    for (const auto& [k, v] : r.extra.items()) j[k] = v;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: %s\n", r.test.c_str(), r.input.c_str());
  if (r.estimate) std::printf("  %-10s %.6g\n", "estimate", *r.estimate);
  if (r.interval) {
    std::printf("  %-10s [%.6g, %.6g]\n", fmt::format("{:g}% CI", r.level * 100).c_str(), r.interval->first,
                r.interval->second);
  }
  if (r.p_value) std::printf("  %-10s %.6g\n", "p-value", *r.p_value);
  for (const auto& [k, v] : r.extra.items()) std::printf("  %-10s %s\n", k.c_str(), v.dump().c_str());
  std::printf("  %-10s %s\n", "method", r.method.c_str());
  return 0;
}

int fail(const std::string& test, const Status& s) {
  std::fprintf(stderr, "noisefloor stats %s: %s\n", test.c_str(), s.message().c_str());
  return static_cast<int>(exit_code_for(s));
}

// Wraps a body returning Result<Report> into a StatsTest::run.
template <typename Body>
StatsTest make(std::string name, std::string usage, std::string summary, Body body) {
  StatsTest t;
  t.name = name;
  t.usage = std::move(usage);
  t.summary = std::move(summary);
  t.run = [name, body](const std::vector<std::string>& args, bool json) {
    Result<Report> r = body(args);
    if (!r.ok()) return fail(name, r.status());
    r->test = name;
    return print(*r, json);
  };
  return t;
}

// ---- the tests -------------------------------------------------------------------

Result<Report> run_proportion(const std::vector<std::string>& args, bool wilson_method) {
  const std::string usage = wilson_method ? "wilson X N [--level L]" : "clopper-pearson X N [--level L]";
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"level"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 2, 2, usage));
  NF_ASSIGN_OR_RETURN(const int64_t x, parse_int("X", p.positional[0]));
  NF_ASSIGN_OR_RETURN(const int64_t n, parse_int("N", p.positional[1]));
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  NF_RETURN_IF_ERROR(st);
  NF_ASSIGN_OR_RETURN(const stats::Interval iv,
                      wilson_method ? stats::wilson(x, n, level) : stats::clopper_pearson(x, n, level));
  Report r;
  r.method = wilson_method ? "Wilson score interval (Wilson 1927), bounds clamped to [0, 1]"
                           : "Clopper-Pearson exact interval (beta quantiles)";
  r.input = fmt::format("{}/{}", x, n);
  r.estimate = iv.estimate;
  r.interval = std::make_pair(iv.low, iv.high);
  r.level = level;
  return r;
}

Result<Report> run_binom(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"alternative", "level"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 2, 3, "binom X N [P0] [--alternative two-sided|less|greater]"));
  NF_ASSIGN_OR_RETURN(const int64_t x, parse_int("X", p.positional[0]));
  NF_ASSIGN_OR_RETURN(const int64_t n, parse_int("N", p.positional[1]));
  double p0 = 0.5;
  if (p.positional.size() == 3) {
    NF_ASSIGN_OR_RETURN(p0, parse_double("P0", p.positional[2]));
  }
  stats::Alternative alt = stats::Alternative::kTwoSided;
  std::string alt_name = "two-sided";
  if (auto it = p.values.find("alternative"); it != p.values.end()) {
    alt_name = it->second;
    if (alt_name == "less") alt = stats::Alternative::kLess;
    else if (alt_name == "greater") alt = stats::Alternative::kGreater;
    else if (alt_name != "two-sided") {
      return InvalidArgument("--alternative must be two-sided, less or greater, got '" + alt_name + "'" +
                             did_you_mean(alt_name, {"two-sided", "less", "greater"}));
    }
  }
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  NF_RETURN_IF_ERROR(st);
  NF_ASSIGN_OR_RETURN(const double pv, stats::binom_test(x, n, p0, alt));
  NF_ASSIGN_OR_RETURN(const stats::Interval iv, stats::clopper_pearson(x, n, level));
  Report r;
  r.method = "exact binomial test (" + alt_name +
             (alt == stats::Alternative::kTwoSided ? ", outcomes no more likely than observed, as scipy binomtest)" : ")") +
             "; Clopper-Pearson interval";
  r.input = fmt::format("{}/{} vs p0 = {:g}", x, n, p0);
  r.estimate = iv.estimate;
  r.interval = std::make_pair(iv.low, iv.high);
  r.level = level;
  r.p_value = pv;
  r.extra["p0"] = p0;
  r.extra["alternative"] = alt_name;
  return r;
}

Result<Report> run_mcnemar(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {}, {"cc"}));
  NF_RETURN_IF_ERROR(want_positional(p, 2, 2, "mcnemar B C [--cc]"));
  NF_ASSIGN_OR_RETURN(const int64_t b, parse_int("B", p.positional[0]));
  NF_ASSIGN_OR_RETURN(const int64_t c, parse_int("C", p.positional[1]));
  Report r;
  r.input = fmt::format("b = {}, c = {}", b, c);
  r.extra["b"] = b;
  r.extra["c"] = c;
  if (b + c > 0) r.estimate = static_cast<double>(b) / static_cast<double>(b + c);
  if (p.flags.count("cc")) {
    NF_ASSIGN_OR_RETURN(const stats::McNemarChi2 chi, stats::mcnemar_chi2(b, c, true));
    r.method = "McNemar chi-square with continuity correction, max(0, |b-c|-1)^2/(b+c), 1 df; estimate = b / (b + c)";
    r.p_value = chi.p_value;
    r.extra["statistic"] = chi.statistic;
  } else {
    NF_ASSIGN_OR_RETURN(const double pv, stats::mcnemar_exact(b, c));
    r.method = "exact McNemar (two-sided binomial on b of b+c at 0.5); estimate = b / (b + c)";
    r.p_value = pv;
  }
  return r;
}

Result<Report> run_paired_diff(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"level", "seed", "resamples"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, "paired-diff FILE.csv [--level L] [--seed S] [--resamples B]"));
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  const int64_t seed = opt_int(p, "seed", 0, st);
  const int64_t resamples = opt_int(p, "resamples", 10000, st);
  NF_RETURN_IF_ERROR(st);
  if (resamples < 1 || resamples > 100000000) return InvalidArgument("--resamples must be in [1, 1e8]");
  NF_ASSIGN_OR_RETURN(const auto cols, read_binary_pairs(p.positional[0]));
  NF_ASSIGN_OR_RETURN(const stats::PairedDifference d,
                      stats::paired_difference(cols.first, cols.second, static_cast<int>(resamples),
                                               static_cast<uint64_t>(seed), level));
  NF_ASSIGN_OR_RETURN(const double pv, stats::mcnemar_exact(d.b10, d.c01));
  Report r;
  r.method = "paired difference of proportions, paired bootstrap percentile CI (items resampled); exact McNemar p";
  r.input = fmt::format("{} ({} paired items)", p.positional[0], d.n);
  r.estimate = d.estimate;
  r.interval = std::make_pair(d.low, d.high);
  r.level = level;
  r.p_value = pv;
  r.extra["rate_a"] = d.rate_a;
  r.extra["rate_b"] = d.rate_b;
  r.extra["b"] = d.b10;
  r.extra["c"] = d.c01;
  r.extra["seed"] = seed;
  r.extra["resamples"] = resamples;
  return r;
}

Result<Report> run_tost(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"margin", "seed", "resamples"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, "tost FILE.csv --margin M [--seed S] [--resamples B]"));
  if (!p.values.count("margin")) return InvalidArgument("tost needs --margin M (e.g. --margin 0.05)");
  Status st;
  const double margin = opt_double(p, "margin", 0.05, st);
  const int64_t seed = opt_int(p, "seed", 0, st);
  const int64_t resamples = opt_int(p, "resamples", 10000, st);
  NF_RETURN_IF_ERROR(st);
  if (resamples < 1 || resamples > 100000000) return InvalidArgument("--resamples must be in [1, 1e8]");
  NF_ASSIGN_OR_RETURN(const auto cols, read_binary_pairs(p.positional[0]));
  NF_ASSIGN_OR_RETURN(const stats::Equivalence e,
                      stats::tost_paired(cols.first, cols.second, margin, static_cast<int>(resamples),
                                         static_cast<uint64_t>(seed)));
  Report r;
  r.method = "equivalence: 90% paired bootstrap CI inside +/-margin (seed 004 §3.5); TOST p from paired t tests "
             "(statsmodels ttost_paired)";
  r.input = fmt::format("{} ({} paired items), margin {:g}", p.positional[0], e.diff.n, margin);
  r.estimate = e.diff.estimate;
  r.interval = std::make_pair(e.diff.low, e.diff.high);
  r.level = 0.90;
  r.p_value = e.p_tost;
  r.extra["equivalent"] = e.equivalent;
  r.extra["p_lower"] = e.p_lower;
  r.extra["p_upper"] = e.p_upper;
  r.extra["margin"] = margin;
  r.extra["seed"] = seed;
  return r;
}

Result<Report> run_adjust(const std::vector<std::string>& args, bool bh) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {}, {}));
  if (p.positional.empty()) return InvalidArgument(std::string("usage: ") + (bh ? "bh" : "holm") + " P1 P2 ...");
  std::vector<double> ps;
  for (size_t i = 0; i < p.positional.size(); ++i) {
    const std::string w = to_lower(p.positional[i]);
    if (w == "nan" || w == "na") {
      ps.push_back(std::nan(""));
      continue;
    }
    NF_ASSIGN_OR_RETURN(const double v, parse_double(fmt::format("P{}", i + 1), p.positional[i]));
    ps.push_back(v);
  }
  NF_ASSIGN_OR_RETURN(const std::vector<double> q, bh ? stats::benjamini_hochberg(ps) : stats::holm(ps));
  Report r;
  r.method = bh ? "Benjamini-Hochberg step-up adjusted p-values (FDR); NaN stays NaN, m = non-NaN count"
                : "Holm step-down adjusted p-values (FWER); NaN stays NaN, m = non-NaN count";
  r.input = fmt::format("{} p-values", ps.size());
  nlohmann::json adj = nlohmann::json::array(), raw = nlohmann::json::array();
  for (size_t i = 0; i < q.size(); ++i) {
    adj.push_back(num(q[i]));
    raw.push_back(num(ps[i]));
  }
  r.extra["p"] = raw;
  r.extra["adjusted"] = adj;
  return r;
}

Result<Report> run_rank(const std::vector<std::string>& args, bool kendall) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, kendall ? "kendall FILE.csv" : "spearman FILE.csv"));
  NF_ASSIGN_OR_RETURN(const auto cols, read_two_columns(p.positional[0]));
  NF_ASSIGN_OR_RETURN(const stats::Correlation c, kendall ? stats::kendall_tau_b(cols.first, cols.second)
                                                          : stats::spearman(cols.first, cols.second));
  Report r;
  r.method = kendall ? "Kendall tau-b, tie-corrected normal approximation (scipy kendalltau asymptotic)"
                     : "Spearman rho (Pearson on average ranks), t distribution with n-2 df (scipy spearmanr)";
  r.input = fmt::format("{} ({} pairs)", p.positional[0], c.n);
  r.estimate = c.estimate;
  r.p_value = c.p_value;
  r.extra["statistic"] = num(c.statistic);
  r.extra["n"] = c.n;
  return r;
}

Result<Report> run_cluster_bootstrap(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"level", "seed", "resamples", "threads"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, "cluster-bootstrap FILE.csv [--level L] [--seed S] [--resamples B]"));
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  const int64_t seed = opt_int(p, "seed", 0, st);
  const int64_t resamples = opt_int(p, "resamples", 10000, st);
  const int64_t threads = opt_int(p, "threads", 1, st);
  NF_RETURN_IF_ERROR(st);
  if (resamples < 1 || resamples > 100000000) return InvalidArgument("--resamples must be in [1, 1e8]");
  if (threads < 1 || threads > 256) return InvalidArgument("--threads must be in [1, 256]");
  NF_ASSIGN_OR_RETURN(const auto cols, read_two_columns(p.positional[0]));
  NF_ASSIGN_OR_RETURN(const stats::Interval iv,
                      stats::cluster_bootstrap_ratio(cols.first, cols.second, static_cast<int>(resamples),
                                                     static_cast<uint64_t>(seed), level, static_cast<int>(threads)));
  Report r;
  r.method = "ratio of sums with cluster bootstrap percentile CI (clusters resampled with replacement)";
  r.input = fmt::format("{} ({} clusters)", p.positional[0], cols.first.size());
  r.estimate = iv.estimate;
  r.interval = std::make_pair(iv.low, iv.high);
  r.level = level;
  r.extra["seed"] = seed;
  r.extra["resamples"] = resamples;
  return r;
}

Result<Report> run_vignettes(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"draws"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 2, 2, "vignettes-needed FLOOR N [--draws D]"));
  NF_ASSIGN_OR_RETURN(const double floor, parse_double("FLOOR", p.positional[0]));
  NF_ASSIGN_OR_RETURN(const int64_t n, parse_int("N", p.positional[1]));
  Status st;
  const int64_t draws = opt_int(p, "draws", 1, st);
  NF_RETURN_IF_ERROR(st);
  if (draws < 1 || draws > 1000000) return InvalidArgument("--draws must be in [1, 1e6]");
  NF_ASSIGN_OR_RETURN(const stats::VignettePlan plan, stats::vignettes_needed(floor, n, static_cast<int>(draws)));
  Report r;
  r.method = "expected vignettes to reach N discordant pairs under no effect: ceil(N / (floor * draws^2)) (seed 000 S2)";
  r.input = fmt::format("floor {:g}, {} discordant pairs, {} draw(s) per condition", floor, n, draws);
  r.estimate = static_cast<double>(plan.vignettes);
  r.extra["vignettes"] = plan.vignettes;
  r.extra["expected_vignettes"] = plan.expected_vignettes;
  r.extra["pairs_per_vignette"] = plan.pairs_per_vignette;
  return r;
}

}  // namespace

void register_core_stats_tests(std::vector<StatsTest>& out) {
  out.push_back(make("wilson", "wilson X N [--level L]", "Wilson score interval for X successes in N trials",
                     [](const auto& a) { return run_proportion(a, true); }));
  out.push_back(make("clopper-pearson", "clopper-pearson X N [--level L]", "Clopper-Pearson exact interval",
                     [](const auto& a) { return run_proportion(a, false); }));
  out.push_back(make("binom", "binom X N [P0] [--alternative two-sided|less|greater]",
                     "exact binomial test of H0: p = P0 (default 0.5)", run_binom));
  out.push_back(make("mcnemar", "mcnemar B C [--cc]",
                     "exact McNemar p from discordant counts (--cc: corrected chi-square)", run_mcnemar));
  out.push_back(make("paired-diff", "paired-diff FILE.csv [--level L] [--seed S] [--resamples B]",
                     "paired difference of two 0/1 columns with paired bootstrap CI", run_paired_diff));
  out.push_back(make("tost", "tost FILE.csv --margin M [--seed S] [--resamples B]",
                     "equivalence of two paired 0/1 columns within +/-M (90% CI, TOST p)", run_tost));
  out.push_back(make("cluster-bootstrap", "cluster-bootstrap FILE.csv [--level L] [--seed S] [--resamples B]",
                     "ratio sum(num)/sum(den) over clusters (columns num,den) with cluster bootstrap CI",
                     run_cluster_bootstrap));
  out.push_back(make("bh", "bh P1 P2 ...", "Benjamini-Hochberg adjusted p-values (NaN allowed)",
                     [](const auto& a) { return run_adjust(a, true); }));
  out.push_back(make("holm", "holm P1 P2 ...", "Holm adjusted p-values (NaN allowed)",
                     [](const auto& a) { return run_adjust(a, false); }));
  out.push_back(make("kendall", "kendall FILE.csv", "Kendall tau-b of two columns with tie-corrected p",
                     [](const auto& a) { return run_rank(a, true); }));
  out.push_back(make("spearman", "spearman FILE.csv", "Spearman rho of two columns (average ranks)",
                     [](const auto& a) { return run_rank(a, false); }));
  out.push_back(make("vignettes-needed", "vignettes-needed FLOOR N [--draws D]",
                     "expected vignettes to reach N discordant pairs at a floor (e.g. 374/4320)", run_vignettes));
}

}  // namespace nf::cli
