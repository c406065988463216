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
#include "cli/stats_csv.h"
#include "cli/stats_report.h"
#include "stats/bootstrap.h"
#include "stats/multiplicity.h"
#include "stats/paired.h"
#include "stats/planning.h"
#include "stats/resample_count.h"
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

// The two columns a two-column test reads, chosen by header name only (issue 13 item 1):
// --columns A,B, default `defaults`. A missing or unknown name is an error naming the
// file, the header line and the closest header; `names` says which columns were used.
struct TwoColumns {
  std::vector<double> first, second;
  std::vector<int> first01, second01;  // read_binary_pairs: the 0/1 values
  std::vector<std::string> names;
  std::string describe() const { return "columns " + names[0] + ", " + names[1]; }
};

Result<TwoColumns> read_two_columns(const Parsed& p, const std::string& path,
                                    const std::vector<std::string>& defaults) {
  TwoColumns out;
  out.names = defaults;
  if (auto it = p.values.find("columns"); it != p.values.end()) {
    out.names.clear();
    for (const auto& w : split(it->second, ',')) out.names.push_back(trim(w));
    if (out.names.size() != 2 || out.names[0].empty() || out.names[1].empty() || out.names[0] == out.names[1])
      return InvalidArgument("--columns needs two different header names, e.g. --columns " + defaults[0] + "," +
                             defaults[1] + "; got '" + it->second + "'");
  }
  NF_ASSIGN_OR_RETURN(const Csv csv, read_csv(path));
  auto cols = numeric_columns(csv, out.names);
  if (!cols.ok()) {
    return InvalidArgument(cols.status().message() +
                           fmt::format(" (this test reads the columns {}, {}; choose others with --columns A,B)",
                                       out.names[0], out.names[1]));
  }
  out.first = std::move((*cols)[0]);
  out.second = std::move((*cols)[1]);
  return out;
}

Result<TwoColumns> read_binary_pairs(const Parsed& p, const std::string& path) {
  NF_ASSIGN_OR_RETURN(TwoColumns cols, read_two_columns(p, path, {"a", "b"}));
  for (size_t i = 0; i < cols.first.size(); ++i) {
    const double a = cols.first[i], b = cols.second[i];
    if ((a != 0.0 && a != 1.0) || (b != 0.0 && b != 1.0)) {
      return InvalidArgument(fmt::format("{}: data row {} has a value other than 0/1 in {}", path, i + 1,
                                         cols.describe()));
    }
    cols.first01.push_back(static_cast<int>(a));
    cols.second01.push_back(static_cast<int>(b));
  }
  return cols;
}

// ---- output: cli/stats_report.h ----------------------------------------------------

using Report = StatsReport;

nlohmann::json num(double v) { return json_number(v); }

// Wraps a body returning Result<Report> into a StatsTest::run.
template <typename Body>
StatsTest make(std::string name, std::string usage, std::string summary, Body body) {
  StatsTest t;
  t.name = name;
  t.usage = std::move(usage);
  t.summary = std::move(summary);
  t.run = [name, body](const std::vector<std::string>& args, bool json) {
    Result<Report> r = body(args);
    if (!r.ok()) return stats_fail(name, r.status());
    r->test = name;
    return print_report(*r, json);
  };
  return t;
}

// ---- the tests -------------------------------------------------------------------

// Every CSV test reads its columns by header name (stats_csv.h); --columns picks others.
constexpr const char* kPairedDiffUsage =
    "paired-diff FILE.csv [--columns a,b] [--level L] [--seed S] [--resamples B]";
constexpr const char* kTostUsage = "tost FILE.csv --margin M [--columns a,b] [--seed S] [--resamples B]";
constexpr const char* kClusterBootstrapUsage =
    "cluster-bootstrap FILE.csv [--columns num,den] [--level L] [--seed S] [--resamples B]";
constexpr const char* kKendallUsage = "kendall FILE.csv [--columns x,y] [--method auto|exact|asymptotic]";
constexpr const char* kSpearmanUsage = "spearman FILE.csv [--columns x,y] [--method auto|exact|asymptotic]";

Result<Report> run_proportion(const std::vector<std::string>& args, bool wilson_method) {
  const std::string usage = wilson_method ? "wilson X N [--level L]" : "clopper-pearson X N [--level L]";
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"level"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 2, 2, usage));
  NF_ASSIGN_OR_RETURN(const int64_t x, parse_int("X", p.positional[0]));
  NF_ASSIGN_OR_RETURN(const int64_t n, parse_int("N", p.positional[1]));
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  NF_RETURN_IF_ERROR(st);
  Report r;
  r.method = wilson_method ? "Wilson score interval (Wilson 1927), bounds clamped to [0, 1]"
                           : "Clopper-Pearson exact interval (beta quantiles)";
  r.input = fmt::format("{}/{}", x, n);
  r.n = n;
  if (x == 0 && n == 0) {  // no trials: undefined, not bad input (stats --help: exit 0, n/a)
    if (!(level > 0.0 && level < 1.0)) return InvalidArgument(fmt::format("--level must be in (0, 1), got {:g}", level));
    r.level = level;
    r.extra["undefined"] = "0 trials: the proportion and its interval are undefined";
    return r;
  }
  NF_ASSIGN_OR_RETURN(const stats::Interval iv,
                      wilson_method ? stats::wilson(x, n, level) : stats::clopper_pearson(x, n, level));
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
  Report r;
  if (x == 0 && n == 0) {  // no trials: undefined, not bad input (stats --help: exit 0, n/a)
    if (!(p0 > 0.0 && p0 < 1.0)) return InvalidArgument(fmt::format("P0 must be in (0, 1), got {:g}", p0));
    if (!(level > 0.0 && level < 1.0)) return InvalidArgument(fmt::format("--level must be in (0, 1), got {:g}", level));
    r.method = "exact binomial test (" + alt_name + "); Clopper-Pearson interval";
    r.input = fmt::format("0/0 vs p0 = {:g}", p0);
    r.n = 0;
    r.extra["p0"] = p0;
    r.extra["alternative"] = alt_name;
    r.extra["undefined"] = "0 trials: there is nothing to test";
    return r;
  }
  NF_ASSIGN_OR_RETURN(const double pv, stats::binom_test(x, n, p0, alt));
  NF_ASSIGN_OR_RETURN(const stats::Interval iv, stats::clopper_pearson(x, n, level));
  r.method = "exact binomial test (" + alt_name +
             (alt == stats::Alternative::kTwoSided ? ", outcomes no more likely than observed, as scipy binomtest)" : ")") +
             "; Clopper-Pearson interval";
  r.input = fmt::format("{}/{} vs p0 = {:g}", x, n, p0);
  r.n = n;
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
  r.n = b + c;  // discordant pairs
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
    NF_ASSIGN_OR_RETURN(const double mid, stats::mcnemar_mid_p(b, c));
    r.method = "exact McNemar (two-sided binomial on b of b+c at 0.5); mid_p = exact p less the observed point "
               "probability (Lancaster 1961; capped at 1 after); estimate = b / (b + c)";
    r.p_value = pv;
    r.extra["mid_p"] = mid;
  }
  return r;
}

/// Refuses a resample count that leaves a tail of the percentile interval at `level` empty
/// (stats/resample_count.h; exit 2) and warns on stderr below 1,000 resamples.
Status resamples_ok(int64_t resamples, double level) {
  if (level > 0.0 && level < 1.0) NF_RETURN_IF_ERROR(stats::check_resamples(resamples, level, "--resamples"));
  if (auto w = stats::resamples_warning(resamples, level, "--resamples"))
    std::fprintf(stderr, "noisefloor stats: warning: %s\n", w->c_str());
  return Status::Ok();
}

Result<Report> run_paired_diff(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"level", "seed", "resamples", "columns"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, kPairedDiffUsage));
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  const int64_t seed = opt_int(p, "seed", 0, st);
  const int64_t resamples = opt_int(p, "resamples", 10000, st);
  NF_RETURN_IF_ERROR(st);
  if (resamples < 1 || resamples > 100000000) return InvalidArgument("--resamples must be in [1, 1e8]");
  NF_RETURN_IF_ERROR(resamples_ok(resamples, level));
  NF_ASSIGN_OR_RETURN(const TwoColumns cols, read_binary_pairs(p, p.positional[0]));
  NF_ASSIGN_OR_RETURN(const stats::PairedDifference d,
                      stats::paired_difference(cols.first01, cols.second01, static_cast<int>(resamples),
                                               static_cast<uint64_t>(seed), level));
  NF_ASSIGN_OR_RETURN(const double pv, stats::mcnemar_exact(d.b10, d.c01));
  Report r;
  r.method = "paired difference of proportions, paired bootstrap percentile CI (items resampled); exact McNemar p";
  r.input = fmt::format("{} ({}; {} paired items)", p.positional[0], cols.describe(), d.n);
  r.n = d.n;
  r.extra["columns"] = cols.names;
  r.estimate = d.estimate;
  r.interval = std::make_pair(d.low, d.high);
  r.bootstrap = true;
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
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"margin", "seed", "resamples", "columns"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, kTostUsage));
  if (!p.values.count("margin")) return InvalidArgument("tost needs --margin M (e.g. --margin 0.05)");
  Status st;
  const double margin = opt_double(p, "margin", 0.05, st);
  const int64_t seed = opt_int(p, "seed", 0, st);
  const int64_t resamples = opt_int(p, "resamples", 10000, st);
  NF_RETURN_IF_ERROR(st);
  if (resamples < 1 || resamples > 100000000) return InvalidArgument("--resamples must be in [1, 1e8]");
  NF_RETURN_IF_ERROR(resamples_ok(resamples, 0.90));  // the equivalence check's 90% interval
  NF_ASSIGN_OR_RETURN(const TwoColumns cols, read_binary_pairs(p, p.positional[0]));
  NF_ASSIGN_OR_RETURN(const stats::Equivalence e,
                      stats::tost_paired(cols.first01, cols.second01, margin, static_cast<int>(resamples),
                                         static_cast<uint64_t>(seed)));
  Report r;
  r.method = "equivalence: 90% paired bootstrap CI inside +/-margin (seed 004 §3.5); TOST p from paired t tests "
             "(statsmodels ttost_paired)";
  r.input = fmt::format("{} ({}; {} paired items), margin {:g}", p.positional[0], cols.describe(), e.diff.n, margin);
  r.n = e.diff.n;
  r.extra["columns"] = cols.names;
  r.estimate = e.diff.estimate;
  r.interval = std::make_pair(e.diff.low, e.diff.high);
  r.bootstrap = true;
  r.level = 0.90;
  r.p_value = e.p_tost;
  r.extra["equivalent"] = e.equivalent;
  r.extra["p_lower"] = e.p_lower;
  r.extra["p_upper"] = e.p_upper;
  r.extra["margin"] = margin;
  r.extra["seed"] = seed;
  r.extra["resamples"] = resamples;
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
  r.n = static_cast<int64_t>(ps.size());
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
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"columns", "method"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, kendall ? kKendallUsage : kSpearmanUsage));
  stats::RankPMethod method = stats::RankPMethod::kAuto;
  std::string method_name = "auto";
  if (auto it = p.values.find("method"); it != p.values.end()) {
    method_name = it->second;
    if (method_name == "exact") method = stats::RankPMethod::kExact;
    else if (method_name == "asymptotic") method = stats::RankPMethod::kAsymptotic;
    else if (method_name != "auto") {
      return InvalidArgument("--method must be auto, exact or asymptotic, got '" + method_name + "'" +
                             did_you_mean(method_name, {"auto", "exact", "asymptotic"}));
    }
  }
  NF_ASSIGN_OR_RETURN(const TwoColumns cols, read_two_columns(p, p.positional[0], {"x", "y"}));
  NF_ASSIGN_OR_RETURN(const stats::Correlation c, kendall ? stats::kendall_tau_b(cols.first, cols.second, method)
                                                          : stats::spearman(cols.first, cols.second, method));
  Report r;
  r.method = std::string(kendall ? "Kendall tau-b" : "Spearman rho (Pearson on average ranks)") + "; p-value " +
             (c.exact ? "exact" : "asymptotic") + ": " + c.p_method;
  r.input = fmt::format("{} ({}; {} pairs)", p.positional[0], cols.describe(), c.n);
  r.n = c.n;
  r.extra["columns"] = cols.names;
  r.estimate = c.estimate;
  r.p_value = c.p_value;
  r.extra["p_method"] = c.exact ? "exact" : "asymptotic";
  r.extra["statistic"] = num(c.statistic);
  return r;
}

Result<Report> run_cluster_bootstrap(const std::vector<std::string>& args) {
  NF_ASSIGN_OR_RETURN(const Parsed p, parse_args(args, {"level", "seed", "resamples", "threads", "columns"}, {}));
  NF_RETURN_IF_ERROR(want_positional(p, 1, 1, kClusterBootstrapUsage));
  Status st;
  const double level = opt_double(p, "level", 0.95, st);
  const int64_t seed = opt_int(p, "seed", 0, st);
  const int64_t resamples = opt_int(p, "resamples", 10000, st);
  const int64_t threads = opt_int(p, "threads", 1, st);
  NF_RETURN_IF_ERROR(st);
  if (resamples < 1 || resamples > 100000000) return InvalidArgument("--resamples must be in [1, 1e8]");
  if (threads < 1 || threads > 256) return InvalidArgument("--threads must be in [1, 256]");
  NF_RETURN_IF_ERROR(resamples_ok(resamples, level));
  NF_ASSIGN_OR_RETURN(const TwoColumns cols, read_two_columns(p, p.positional[0], {"num", "den"}));
  NF_ASSIGN_OR_RETURN(const stats::BootstrapResult b,
                      stats::cluster_bootstrap_ratio_replicates(cols.first, cols.second, static_cast<int>(resamples),
                                                                static_cast<uint64_t>(seed), level,
                                                                static_cast<int>(threads)));
  Report r;
  r.method = "ratio of sums with cluster bootstrap percentile CI (clusters resampled with replacement; a resample "
             "whose denominators sum to 0 is dropped and counted in undefined_resamples)";
  r.input = fmt::format("{} ({}: sum({}) / sum({}) over {} clusters)", p.positional[0], cols.describe(), cols.names[0],
                        cols.names[1], cols.first.size());
  r.n = static_cast<int64_t>(cols.first.size());
  r.extra["columns"] = cols.names;
  r.estimate = b.estimate;
  r.interval = std::make_pair(b.low, b.high);
  r.bootstrap = true;
  r.level = level;
  r.extra["seed"] = seed;
  r.extra["resamples"] = resamples;
  r.extra["undefined_resamples"] = b.resamples - b.valid_replicates;
  if (degenerate_interval(r)) {
    // As the analyses (docs/intervals.md): beside a degenerate interval of a count ratio,
    // the Wilson score interval of sum(num) of sum(den).
    double x = 0.0, n = 0.0;
    bool counts = true;
    for (size_t i = 0; i < cols.first.size(); ++i) {
      x += cols.first[i];
      n += cols.second[i];
      counts = counts && cols.first[i] >= 0 && cols.first[i] == std::floor(cols.first[i]) &&
               cols.second[i] >= cols.first[i] && cols.second[i] == std::floor(cols.second[i]);
    }
    if (counts && n >= 1 && n < 9.0e15) {
      NF_ASSIGN_OR_RETURN(const stats::Interval w,
                          stats::wilson(static_cast<int64_t>(x), static_cast<int64_t>(n), level));
      r.extra["exact_interval"] = {
          {"method", "wilson"}, {"lo", w.low}, {"hi", w.high}, {"x", static_cast<int64_t>(x)},
          {"n", static_cast<int64_t>(n)},
          {"note", fmt::format("Wilson score interval of {:g}/{:g}; it treats the {:g} units as independent, but units "
                               "within a cluster are not, so the true uncertainty is wider",
                               x, n, n)}};
    }
  }
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
                     "exact McNemar p and mid-p from discordant counts (--cc: corrected chi-square)", run_mcnemar));
  out.push_back(make("paired-diff", kPairedDiffUsage,
                     "paired difference of two 0/1 columns with paired bootstrap CI", run_paired_diff));
  out.push_back(make("tost", kTostUsage,
                     "equivalence of two paired 0/1 columns within +/-M (90% CI, TOST p)", run_tost));
  out.push_back(make("cluster-bootstrap", kClusterBootstrapUsage,
                     "ratio sum(num)/sum(den) over clusters (header columns num,den) with cluster bootstrap CI",
                     run_cluster_bootstrap));
  out.push_back(make("bh", "bh P1 P2 ...", "Benjamini-Hochberg adjusted p-values (NaN allowed)",
                     [](const auto& a) { return run_adjust(a, true); }));
  out.push_back(make("holm", "holm P1 P2 ...", "Holm adjusted p-values (NaN allowed)",
                     [](const auto& a) { return run_adjust(a, false); }));
  out.push_back(make("kendall", kKendallUsage, "Kendall tau-b of two columns (x,y); exact p without ties for n <= 33, else tie-corrected normal",
                     [](const auto& a) { return run_rank(a, true); }));
  out.push_back(make("spearman", kSpearmanUsage, "Spearman rho of two columns (x,y; average ranks); exact permutation p for n <= 10, else t",
                     [](const auto& a) { return run_rank(a, false); }));
  out.push_back(make("vignettes-needed", "vignettes-needed FLOOR N [--draws D]",
                     "expected vignettes to reach N discordant pairs at a floor (e.g. 374/4320)", run_vignettes));
}

}  // namespace nf::cli
