// `noisefloor stats` entries for agreement (fleiss, cohen, scott, gwet, raw-agreement,
// krippendorff), Type-II ANOVA (anova) and logistic regression (logit).
//
// Input files are CSV (RFC 4180: comma-separated, double-quoted fields may hold commas,
// quotes doubled inside quotes), first line a header.
//  Ratings layout (default for agreement): one row per item, one column per rater, each
//    cell a category label (any text; categories are the sorted distinct labels); an
//    empty cell is a missing rating. The item-id column is --item-column NAME, else a
//    first column headed "item" or "id"; it is not a rater. A column headed "cluster"
//    (optional) groups items for the bootstrap CI (e.g. the prompt behind several items);
//    it is not a rater either. Without --raters, a remaining column that looks like an
//    item id is refused (exit 2, naming it) rather than counted as a rater: its header has
//    a word id / item / itemid / uid / key / index / idx (split at non-letters, e.g.
//    "item_id", "ItemId", "question id"), or, with at least 3 rows, it has a different
//    non-empty value in every row while another rater column repeats a value.
//  Counts layout (fleiss --counts): one row per item, one column per category, each cell
//    the number of raters who chose that category (a non-negative integer); an item-id
//    column and a "cluster" column as in the ratings layout. The bootstrap CI resamples the
//    items (clusters) exactly as the ratings layout does.
//  Model layout (anova, logit): one row per observation; --response names the response
//    column, --factors the categorical columns, --numeric the numeric ones.
// Bad input exits 2 with "FILE:LINE:COLUMN: message".
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
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
#include "stats/agreement.h"
#include "stats/agreement_scales.h"
#include "stats/linear_model.h"
#include "stats/logistic.h"
#include "stats/resample_count.h"
#include "util/exit_code.h"
#include "util/file.h"
#include "util/strings.h"

namespace nf::cli {
namespace {

// ---- arguments -----------------------------------------------------------------------

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> flags;
};

Result<Args> parse(const std::vector<std::string>& words, const std::set<std::string>& value_opts,
                   const std::set<std::string>& flag_opts) {
  Args a;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!starts_with(w, "--")) {
      a.positional.push_back(w);
      continue;
    }
    std::string name = w.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (value_opts.count(name)) {
      if (!value) {
        if (i + 1 >= words.size()) return InvalidArgument("option --" + name + " needs a value");
        value = words[++i];
      }
      a.values[name] = *value;
    } else if (flag_opts.count(name) && !value) {
      a.flags.insert(name);
    } else {
      std::vector<std::string> known(value_opts.begin(), value_opts.end());
      known.insert(known.end(), flag_opts.begin(), flag_opts.end());
      return InvalidArgument("unknown option --" + name + did_you_mean(name, known));
    }
  }
  return a;
}

Result<double> opt_number(const Args& a, const std::string& name, double def) {
  auto it = a.values.find(name);
  if (it == a.values.end()) return def;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || end != it->second.c_str() + it->second.size()) {
    return InvalidArgument("--" + name + ": '" + it->second + "' is not a number");
  }
  return v;
}

std::vector<std::string> list_opt(const Args& a, const std::string& name) {
  std::vector<std::string> out;
  auto it = a.values.find(name);
  if (it == a.values.end()) return out;
  for (const auto& s : split(it->second, ',')) {
    if (!trim(s).empty()) out.push_back(trim(s));
  }
  return out;
}

int fail(const std::string& test, const Status& s) {
  std::fprintf(stderr, "noisefloor stats %s: %s\n", test.c_str(), s.message().c_str());
  return static_cast<int>(exit_code_for(s));
}

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// Names joined with ", " for the input line; a name holding a comma or a double quote is
// quoted as in CSV ("rater, one" -> "\"rater, one\""), so the list reads unambiguously.
std::string name_list(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (n.find_first_of(",\"") == std::string::npos) {
      out.push_back(n);
      continue;
    }
    std::string q = "\"";
    for (char c : n) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    out.push_back(q + "\"");
  }
  return join(out, ", ");
}

// ---- agreement -----------------------------------------------------------------------

struct Ratings {
  stats::RatingTable table;
  std::vector<std::string> raters;
  std::vector<std::string> categories;
  std::vector<std::string> clusters;  // empty when there is no "cluster" column
};

bool is_id_header(const std::string& h) {
  const std::string l = to_lower(h);
  return l == "item" || l == "id";
}

// A header that names an item id rather than a rater: one of its words (split at
// non-alphanumerics, lower-cased) is id / item / itemid / uid / key / index / idx.
bool id_like_header(const std::string& h) {
  static const std::set<std::string> kIdWords = {"id", "item", "itemid", "uid", "key", "index", "idx"};
  std::string word;
  const std::string l = to_lower(h) + " ";
  for (char ch : l) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += ch;
    } else {
      if (kIdWords.count(word)) return true;
      word.clear();
    }
  }
  return false;
}

// Every row holds a different non-empty value in column `c`.
bool all_distinct(const Csv& csv, size_t c) {
  std::set<std::string> seen;
  for (const auto& row : csv.rows) {
    if (row[c].text.empty() || !seen.insert(row[c].text).second) return false;
  }
  return true;
}

// The item-id column: --item-column NAME (must exist), else a first column headed
// item/id, else none.
Result<std::optional<size_t>> item_column(const Csv& csv, const std::string& named) {
  if (!named.empty()) {
    NF_ASSIGN_OR_RETURN(const size_t c, column_index(csv, named));
    return std::optional<size_t>(c);
  }
  if (!csv.header.empty() && is_id_header(csv.header[0])) return std::optional<size_t>(0);
  return std::optional<size_t>();
}

// Refuses an automatically chosen rater column that looks like an item id (the rule in
// the file comment): "FILE:LINE:FIELD: column 'x' looks like an item id ...".
Status refuse_id_like(const Csv& csv, const std::vector<size_t>& cols, bool value_rule) {
  for (size_t c : cols) {
    std::string why;
    if (id_like_header(csv.header[c])) {
      why = "its header names an id";
    } else if (value_rule && csv.rows.size() >= 3 && all_distinct(csv, c)) {
      for (size_t o : cols) {
        if (o != c && !all_distinct(csv, o)) {
          why = fmt::format("it holds a different value in each of the {} rows, unlike rater column '{}'",
                            csv.rows.size(), csv.header[o]);
          break;
        }
      }
    }
    if (!why.empty()) {
      const Cell head{csv.header[c], csv.header_line, static_cast<int>(c) + 1};
      return InvalidArgument(fmt::format(
          "{}: column '{}' looks like an item id, not a rater ({}); name it with --item-column {}, or choose the "
          "rater columns with --raters A,B,...",
          csv.where(head), csv.header[c], why, csv.header[c]));
    }
  }
  return Status::Ok();
}

// The rater columns (`pick`, else every column but the item column (`item_name`, else a
// leading item/id) and a cluster column, refusing one that looks like an item id) and
// the category codes: indexes into `declared` when given (a label outside it is an error
// naming the cell), else into the sorted distinct labels.
Result<Ratings> read_ratings(const Csv& csv, const std::vector<std::string>& pick, const std::string& item_name,
                             const std::vector<std::string>& declared) {
  Ratings r;
  std::vector<size_t> cols;
  std::optional<size_t> cluster_col;
  for (size_t i = 0; i < csv.header.size(); ++i) {
    if (to_lower(csv.header[i]) == "cluster") cluster_col = i;
  }
  NF_ASSIGN_OR_RETURN(const std::optional<size_t> item_col, item_column(csv, item_name));
  if (!pick.empty()) {
    for (const auto& name : pick) {
      NF_ASSIGN_OR_RETURN(size_t c, column_index(csv, name));
      if (item_col && *item_col == c)
        return InvalidArgument(fmt::format("{}:{}: --raters names '{}', the item-id column", csv.path,
                                           csv.header_line, name));
      cols.push_back(c);
    }
  } else {
    for (size_t i = 0; i < csv.header.size(); ++i) {
      if ((item_col && *item_col == i) || (cluster_col && *cluster_col == i)) continue;
      cols.push_back(i);
    }
    NF_RETURN_IF_ERROR(refuse_id_like(csv, cols, /*value_rule=*/true));
  }
  if (!declared.empty()) {
    r.categories = declared;
  } else {
    std::set<std::string> labels;
    for (const auto& row : csv.rows) {
      for (size_t c : cols) {
        if (!row[c].text.empty()) labels.insert(row[c].text);
      }
    }
    r.categories.assign(labels.begin(), labels.end());
  }
  std::map<std::string, int64_t> code;
  for (size_t i = 0; i < r.categories.size(); ++i) code[r.categories[i]] = static_cast<int64_t>(i);
  for (size_t c : cols) r.raters.push_back(csv.header[c]);
  for (const auto& row : csv.rows) {
    std::vector<std::optional<int64_t>> item;
    for (size_t c : cols) {
      if (row[c].text.empty()) {
        item.emplace_back();
        continue;
      }
      auto it = code.find(row[c].text);
      if (it == code.end())
        return InvalidArgument(fmt::format("{}: label '{}' is not one of the declared categories {}{}",
                                           csv.where(row[c]), row[c].text, join(declared, ","),
                                           did_you_mean(row[c].text, declared)));
      item.push_back(it->second);
    }
    r.table.push_back(std::move(item));
    if (cluster_col) r.clusters.push_back(row[*cluster_col].text);
  }
  return r;
}

// The counts layout: one column per category, chosen by header name when `declared`
// is given (each must exist), else every column but the item column (`item_name`, else a
// leading item/id); one whose header names an id is refused.
Result<std::vector<int64_t>> read_counts(const Csv& csv, const std::vector<std::string>& declared,
                                         const std::string& item_name, std::vector<std::string>& categories,
                                         std::vector<std::string>& clusters) {
  std::vector<size_t> cols;
  NF_ASSIGN_OR_RETURN(const std::optional<size_t> item_col, item_column(csv, item_name));
  std::optional<size_t> cluster_col;
  for (size_t i = 0; i < csv.header.size(); ++i) {
    if (to_lower(csv.header[i]) == "cluster" && !(item_col && *item_col == i)) cluster_col = i;
  }
  if (!declared.empty()) {
    for (const auto& name : declared) {
      NF_ASSIGN_OR_RETURN(const size_t c, column_index(csv, name));
      cols.push_back(c);
      categories.push_back(name);
    }
  } else {
    for (size_t i = 0; i < csv.header.size(); ++i) {
      if ((item_col && *item_col == i) || (cluster_col && *cluster_col == i)) continue;
      cols.push_back(i);
      categories.push_back(csv.header[i]);
    }
    NF_RETURN_IF_ERROR(refuse_id_like(csv, cols, /*value_rule=*/false));
  }
  std::vector<int64_t> counts;
  for (const auto& row : csv.rows) {
    if (cluster_col && std::find(cols.begin(), cols.end(), *cluster_col) == cols.end())
      clusters.push_back(row[*cluster_col].text);
    for (size_t c : cols) {
      const Cell& cell = row[c];
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(cell.text.c_str(), &end, 10);
      if (cell.text.empty() || end != cell.text.c_str() + cell.text.size() || errno == ERANGE || v < 0) {
        return InvalidArgument(fmt::format("{}: '{}' is not a non-negative count", csv.where(cell), cell.text));
      }
      counts.push_back(v);
    }
  }
  return counts;
}

enum class Coef { kFleiss, kCohen, kScott, kGwet, kRaw, kKrippendorff };

struct CoefInfo {
  const char* test;
  const char* method;
  bool two_raters;
};

CoefInfo info(Coef c) {
  switch (c) {
    case Coef::kFleiss:
      return {"fleiss", "Fleiss kappa (Fleiss 1971; unequal raters: P_i over n_i(n_i-1), items with <2 ratings dropped)",
              false};
    case Coef::kCohen: return {"cohen", "Cohen kappa (Cohen 1960)", true};
    case Coef::kScott: return {"scott", "Scott pi (Scott 1955)", true};
    case Coef::kGwet:
      return {"gwet", "Gwet AC1 (Gwet 2008; more than two raters: Gwet 2014 ch. 4, q = the declared categories)",
              false};
    case Coef::kRaw: return {"raw-agreement", "raw (observed) agreement", true};
    case Coef::kKrippendorff: return {"krippendorff", "Krippendorff alpha, nominal (Krippendorff 2011)", false};
  }
  return {"", "", false};
}

// A declared category list: --categories A,B,C,D (in scale order; duplicates are an error).
Result<std::vector<std::string>> declared_categories(const Args& a) {
  const auto list = list_opt(a, "categories");
  std::set<std::string> seen;
  for (const auto& c : list) {
    if (!seen.insert(c).second) return InvalidArgument("--categories: '" + c + "' is listed twice");
  }
  if (a.values.count("categories") && list.size() < 2)
    return InvalidArgument("--categories needs the whole category set, at least two labels (e.g. --categories "
                           "A,B,C,D or 1,2,3,4,5), got '" + a.values.at("categories") + "'");
  return list;
}

int run_agreement(Coef coef, const std::vector<std::string>& words, bool json) {
  const CoefInfo ci = info(coef);
  std::set<std::string> value_opts = {"raters", "item-column", "resamples", "seed", "level", "categories"};
  if (coef == Coef::kCohen) value_opts.insert("weights");
  auto args = parse(words, value_opts, {"counts"});
  if (!args.ok()) return fail(ci.test, args.status());
  if (args->positional.size() != 1) {
    return fail(ci.test, InvalidArgument("expected one FILE.csv argument, got " +
                                         std::to_string(args->positional.size())));
  }
  auto declared = declared_categories(*args);
  if (!declared.ok()) return fail(ci.test, declared.status());
  std::string weights = "none";
  if (auto it = args->values.find("weights"); it != args->values.end()) {
    weights = it->second;
    if (weights != "none" && weights != "linear" && weights != "quadratic")
      return fail(ci.test, InvalidArgument("--weights must be none, linear or quadratic, got '" + weights + "'" +
                                           did_you_mean(weights, {"none", "linear", "quadratic"})));
  }
  std::vector<double> scale;  // weighted kappa: the numeric values of the declared scale
  if (weights != "none") {
    if (declared->empty())
      return fail(ci.test, InvalidArgument("--weights " + weights +
                                           " needs the ordinal scale in order: --categories 1,2,3,4,5 (values nobody "
                                           "used count too)"));
    for (const auto& c : *declared) {
      char* end = nullptr;
      const double v = std::strtod(c.c_str(), &end);
      if (c.empty() || end != c.c_str() + c.size() || !std::isfinite(v))
        return fail(ci.test, InvalidArgument("--weights " + weights + ": category '" + c +
                                             "' is not a number; weights follow the scale values"));
      scale.push_back(v);
    }
  }
  auto csv = read_csv(args->positional[0]);
  if (!csv.ok()) return fail(ci.test, csv.status());
  const auto item_it = args->values.find("item-column");
  const std::string item_name = item_it == args->values.end() ? "" : trim(item_it->second);
  auto level = opt_number(*args, "level", 0.95);
  auto resamples = opt_number(*args, "resamples", 2000);
  auto seed = opt_number(*args, "seed", 1);
  for (const auto* r : {&level, &resamples, &seed}) {
    if (!r->ok()) return fail(ci.test, r->status());
  }
  // A resample in each tail of the percentile interval (stats/resample_count.h); warn below 1,000.
  if (*level > 0.0 && *level < 1.0 && *resamples >= 1 && *resamples <= 1e8) {
    if (Status st = stats::check_resamples(static_cast<int64_t>(*resamples), *level, "--resamples"); !st.ok())
      return fail(ci.test, st);
    if (auto w = stats::resamples_warning(static_cast<int64_t>(*resamples), *level, "--resamples"))
      std::fprintf(stderr, "noisefloor stats: warning: %s\n", w->c_str());
  }
  StatsReport rep;
  rep.test = ci.test;
  rep.method = ci.method;
  if (weights != "none") rep.method = std::string("weighted Cohen kappa (Cohen 1968), ") + weights +
                                      " disagreement weights by scale value";
  rep.level = *level;
  Result<stats::Agreement> est = Internal("unset");
  std::optional<stats::AgreementInterval> interval;
  std::string ci_note;
  std::vector<std::string> categories, raters;
  if (args->flags.count("counts")) {
    if (coef != Coef::kFleiss) return fail(ci.test, InvalidArgument("--counts is only for fleiss"));
    std::vector<std::string> clusters;
    auto counts = read_counts(*csv, *declared, item_name, categories, clusters);
    if (!counts.ok()) return fail(ci.test, counts.status());
    const auto k = static_cast<int64_t>(categories.size());
    est = stats::fleiss_kappa_counts(*counts, k);
    rep.input = fmt::format("{} (counts; category columns {})", args->positional[0], name_list(categories));
    if (est.ok()) {
      // Fleiss' kappa needs each item's count row only: the same item bootstrap as the
      // ratings layout (same items drawn for the same seed, so the same interval).
      auto boot = stats::fleiss_kappa_counts_bootstrap(*counts, k, static_cast<int>(*resamples),
                                                       static_cast<uint64_t>(*seed), *level, clusters);
      if (!boot.ok() && boot.status().code() != StatusCode::kUndefined) return fail(ci.test, boot.status());
      if (boot.ok()) {
        interval = *boot;
        ci_note = clusters.empty() ? "item bootstrap percentile CI" : "cluster bootstrap percentile CI";
      } else {
        ci_note = "no interval: " + boot.status().message();
      }
    }
  } else {
    auto ratings = read_ratings(*csv, list_opt(*args, "raters"), item_name, *declared);
    if (!ratings.ok()) return fail(ci.test, ratings.status());
    const size_t n_raters = ratings->raters.size();
    if ((ci.two_raters || weights != "none") && n_raters != 2) {
      return fail(ci.test, InvalidArgument(fmt::format(
                               "{}:{}: {} needs exactly two rater columns, found {} ({}); choose two with --raters A,B",
                               csv->path, csv->header_line, ci.test, n_raters, name_list(ratings->raters))));
    }
    if (n_raters < 2)
      return fail(ci.test, InvalidArgument(fmt::format("{}:{}: {} needs at least two rater columns, found {}",
                                                       csv->path, csv->header_line, ci.test, n_raters)));
    const auto k_declared = static_cast<int64_t>(declared->size());
    const auto k_seen = static_cast<int64_t>(ratings->categories.size());
    const stats::KappaWeights kw = weights == "linear"      ? stats::KappaWeights::kLinear
                                   : weights == "quadratic" ? stats::KappaWeights::kQuadratic
                                                            : stats::KappaWeights::kNone;
    stats::AgreementFn fn = [coef, k_declared, k_seen, kw, scale, n_raters](const stats::RatingTable& t)
        -> Result<stats::Agreement> {
      if (coef == Coef::kFleiss)
        return k_declared > 0 ? stats::fleiss_kappa_declared(t, k_declared) : stats::fleiss_kappa(t);
      if (coef == Coef::kKrippendorff) return stats::krippendorff_alpha_nominal(t);
      if (coef == Coef::kGwet && n_raters > 2)
        return stats::gwet_ac1_declared(t, k_declared > 0 ? k_declared : std::max<int64_t>(2, k_seen));
      std::vector<std::optional<int64_t>> a, b;
      for (const auto& row : t) {
        a.push_back(row.size() > 0 ? row[0] : std::nullopt);
        b.push_back(row.size() > 1 ? row[1] : std::nullopt);
      }
      if (coef == Coef::kCohen && !scale.empty()) return stats::weighted_kappa(a, b, scale, kw);
      if (coef == Coef::kCohen) return stats::cohen_kappa(a, b);
      if (coef == Coef::kScott) return stats::scott_pi(a, b);
      if (coef == Coef::kGwet) return stats::gwet_ac1(a, b, k_declared);
      return stats::raw_agreement(a, b);
    };
    est = fn(ratings->table);
    raters = ratings->raters;
    categories = ratings->categories;
    rep.input = fmt::format("{} (raters {}; categories {}{})", args->positional[0], name_list(raters),
                            name_list(categories), declared->empty() ? ", as found" : ", declared");
    if (est.ok()) {
      auto boot = stats::agreement_bootstrap(ratings->table, fn, static_cast<int>(*resamples),
                                             static_cast<uint64_t>(*seed), *level, ratings->clusters);
      if (!boot.ok() && boot.status().code() != StatusCode::kUndefined) return fail(ci.test, boot.status());
      if (boot.ok()) interval = *boot;
      ci_note = !boot.ok() ? "no interval: " + boot.status().message()
                : ratings->clusters.empty() ? "item bootstrap percentile CI"
                                            : "cluster bootstrap percentile CI";
    }
  }
  if (!est.ok()) {
    if (est.status().code() != StatusCode::kUndefined) return fail(ci.test, est.status());
    // Undefined is a result, not a failure of the input: report it, exit 0.
    rep.extra["undefined"] = est.status().message();
  } else {
    rep.estimate = est->estimate;
    rep.n = est->units;
    rep.extra["observed_agreement"] = json_number(est->observed);
    rep.extra["chance_agreement"] = json_number(est->expected);
    rep.extra["ratings"] = est->ratings;
  }
  if (!raters.empty()) rep.extra["raters"] = raters;
  rep.extra["categories"] = categories;
  if (coef == Coef::kCohen) rep.extra["weights"] = weights;
  if (interval) {
    rep.interval = std::make_pair(interval->low, interval->high);
    rep.bootstrap = true;
    rep.extra["interval_method"] = ci_note;
    rep.extra["resamples"] = interval->resamples;
    rep.extra["undefined_resamples"] = interval->undefined;
    rep.extra["seed"] = interval->seed;
  } else if (!ci_note.empty()) {
    rep.extra["interval_method"] = ci_note;
  }
  return print_report(rep, json);
}

// ---- models --------------------------------------------------------------------------

Result<stats::ModelFrame> read_frame(const Csv& csv, const Args& a, bool interactions, bool binary) {
  stats::ModelFrame f;
  auto it = a.values.find("response");
  if (it == a.values.end()) return InvalidArgument("--response COLUMN is required");
  NF_ASSIGN_OR_RETURN(size_t ycol, column_index(csv, it->second));
  const auto factors = list_opt(a, "factors");
  const auto numeric = list_opt(a, "numeric");
  if (factors.empty() && numeric.empty()) return InvalidArgument("give --factors and/or --numeric columns");
  for (const auto& row : csv.rows) {
    NF_ASSIGN_OR_RETURN(double y, cell_number(csv, row[ycol]));
    if (binary && y != 0.0 && y != 1.0) {
      return InvalidArgument(fmt::format("{}: response '{}' is not 0 or 1", csv.where(row[ycol]), row[ycol].text));
    }
    f.response.push_back(y);
  }
  for (const auto& name : factors) {
    NF_ASSIGN_OR_RETURN(size_t c, column_index(csv, name));
    stats::FactorColumn col{name, {}};
    for (const auto& row : csv.rows) {
      if (row[c].text.empty()) return InvalidArgument(fmt::format("{}: empty factor level", csv.where(row[c])));
      col.values.push_back(row[c].text);
    }
    f.factors.push_back(std::move(col));
  }
  for (const auto& name : numeric) {
    NF_ASSIGN_OR_RETURN(size_t c, column_index(csv, name));
    stats::NumericColumn col{name, {}};
    for (const auto& row : csv.rows) {
      NF_ASSIGN_OR_RETURN(double v, cell_number(csv, row[c]));
      col.values.push_back(v);
    }
    f.numeric.push_back(std::move(col));
  }
  if (interactions) {
    for (size_t i = 0; i < factors.size(); ++i) {
      for (size_t j = i + 1; j < factors.size(); ++j) f.interactions.emplace_back(factors[i], factors[j]);
    }
  }
  return f;
}

int run_anova(const std::vector<std::string>& words, bool json) {
  auto args = parse(words, {"response", "factors", "numeric"}, {"interactions"});
  if (!args.ok()) return fail("anova", args.status());
  if (args->positional.size() != 1) return fail("anova", InvalidArgument("expected one FILE.csv argument"));
  auto csv = read_csv(args->positional[0]);
  if (!csv.ok()) return fail("anova", csv.status());
  auto frame = read_frame(*csv, *args, args->flags.count("interactions") > 0, false);
  if (!frame.ok()) return fail("anova", frame.status());
  auto t = stats::anova_type2(*frame);
  if (!t.ok()) return fail("anova", t.status().with_context(args->positional[0]));
  const char* method = "OLS, Type-II sums of squares; eta^2 and Hays' omega^2 as shares of the corrected total SS";
  if (json) {
    nlohmann::json out;
    out["test"] = "anova";
    out["method"] = method;
    out["input"] = args->positional[0];
    out["terms"] = nlohmann::json::array();
    for (const auto& r : t->rows) {
      out["terms"].push_back({{"term", r.term}, {"df", r.df}, {"sum_sq", num(r.sum_sq)}, {"mean_sq", num(r.mean_sq)},
                              {"f", num(r.f)}, {"p_value", num(r.p)}, {"eta_sq", num(r.eta_sq)},
                              {"omega_sq", num(r.omega_sq)}});
    }
    out["residual"] = {{"df", t->df_resid}, {"sum_sq", num(t->rss)}, {"mean_sq", num(t->mse)}};
    out["ss_total"] = num(t->ss_total);
    out["r_squared"] = num(t->r_squared);
    out["n"] = t->n;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-24s %4s %14s %12s %12s %10s %10s\n", "term", "df", "sum_sq", "F", "p", "eta^2", "omega^2");
  for (const auto& r : t->rows) {
    std::printf("%-24s %4lld %14.8g %12.6g %12.6g %10.6f %10.6f\n", r.term.c_str(), static_cast<long long>(r.df),
                r.sum_sq, r.f, r.p, r.eta_sq, r.omega_sq);
  }
  std::printf("%-24s %4lld %14.8g\n", "Residual", static_cast<long long>(t->df_resid), t->rss);
  std::printf("n = %lld, SS_total = %.8g, R^2 = %.6f\nmethod: %s\n", static_cast<long long>(t->n), t->ss_total,
              t->r_squared, method);
  return 0;
}

int run_logit(const std::vector<std::string>& words, bool json) {
  auto args = parse(words, {"response", "factors", "numeric", "level"}, {"interactions"});
  if (!args.ok()) return fail("logit", args.status());
  if (args->positional.size() != 1) return fail("logit", InvalidArgument("expected one FILE.csv argument"));
  auto level = opt_number(*args, "level", 0.95);
  if (!level.ok()) return fail("logit", level.status());
  if (!(*level > 0.0 && *level < 1.0)) return fail("logit", InvalidArgument("--level must be in (0, 1)"));
  auto csv = read_csv(args->positional[0]);
  if (!csv.ok()) return fail("logit", csv.status());
  auto frame = read_frame(*csv, *args, args->flags.count("interactions") > 0, true);
  if (!frame.ok()) return fail("logit", frame.status());
  auto fit = stats::logit(*frame);
  if (!fit.ok()) return fail("logit", fit.status().with_context(args->positional[0]));
  // Wald interval: coef +- z_{(1+level)/2} se; the normal quantile by bisection on erfc.
  double lo = 0.0, hi = 10.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erfc(mid / std::sqrt(2.0)) > 1.0 - *level ? lo : hi) = mid;
  }
  const double zq = 0.5 * (lo + hi);
  const char* method = "logistic regression by IRLS; SE from the inverse Fisher information; Wald z, two-sided p";
  if (json) {
    nlohmann::json out;
    out["test"] = "logit";
    out["method"] = method;
    out["input"] = args->positional[0];
    out["level"] = *level;
    out["coefficients"] = nlohmann::json::array();
    for (const auto& c : fit->coefs) {
      out["coefficients"].push_back({{"name", c.name}, {"estimate", num(c.coef)}, {"se", num(c.se)},
                                     {"z", num(c.z)}, {"p_value", num(c.p)},
                                     {"interval", {num(c.coef - zq * c.se), num(c.coef + zq * c.se)}}});
    }
    out["log_likelihood"] = num(fit->log_likelihood);
    out["null_log_likelihood"] = num(fit->null_log_likelihood);
    out["iterations"] = fit->iterations;
    out["n"] = fit->n;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-32s %12s %10s %9s %11s %24s\n", "coefficient", "estimate", "SE", "z", "p",
              fmt::format("{:.0f}% Wald CI", *level * 100).c_str());
  for (const auto& c : fit->coefs) {
    std::printf("%-32s %12.6f %10.6f %9.4f %11.4g   [%9.6f, %9.6f]\n", c.name.c_str(), c.coef, c.se, c.z, c.p,
                c.coef - zq * c.se, c.coef + zq * c.se);
  }
  std::printf("n = %lld, log-likelihood %.6f (null %.6f), %d iterations\nmethod: %s\n",
              static_cast<long long>(fit->n), fit->log_likelihood, fit->null_log_likelihood, fit->iterations, method);
  return 0;
}

const char* kRatingsUsage =
    " FILE.csv [--raters A,B] [--item-column NAME] [--categories A,B,C,D] [--resamples B] [--seed S] [--level L]";

}  // namespace

const char* const kRatingsLayoutHelp =
    "  Rows are items, columns are raters (or replicate runs); an empty cell is a missing rating.\n"
    "  Not raters: the item-id column (--item-column NAME, else a first column headed item or id)\n"
    "  and a column headed cluster (groups items for the bootstrap CI). --raters A,B,... picks the\n"
    "  rater columns by header name. Without --raters, a column that looks like an item id is refused\n"
    "  (exit 2, naming it): its header has a word id, item, itemid, uid, key, index or idx (e.g.\n"
    "  item_id, ItemId), or (3+ rows) it has a different value in every row while another rater\n"
    "  column repeats one. Name it with --item-column, or choose the raters with --raters.\n";

void register_model_stats_tests(std::vector<StatsTest>& out) {
  const std::string r = kRatingsUsage;
  out.push_back({"fleiss", "fleiss" + r + " [--counts]",
                 "Fleiss kappa over every rater column (rows = items, empty = missing), on the declared categories; "
                 "or --counts: columns = categories",
                 [](const std::vector<std::string>& a, bool j) { return run_agreement(Coef::kFleiss, a, j); }});
  out.push_back({"cohen", "cohen" + r + " [--weights none|linear|quadratic]",
                 "Cohen kappa of two rater columns; weighted on the ordinal scale given by --categories",
                 [](const std::vector<std::string>& a, bool j) { return run_agreement(Coef::kCohen, a, j); }});
  out.push_back({"scott", "scott" + r, "Scott's pi of two rater columns",
                 [](const std::vector<std::string>& a, bool j) { return run_agreement(Coef::kScott, a, j); }});
  out.push_back({"gwet", "gwet" + r,
                 "Gwet AC1 over every rater column, q = the declared categories (default: the labels found, >= 2)",
                 [](const std::vector<std::string>& a, bool j) { return run_agreement(Coef::kGwet, a, j); }});
  out.push_back({"raw-agreement", "raw-agreement" + r, "share of items two raters label alike",
                 [](const std::vector<std::string>& a, bool j) { return run_agreement(Coef::kRaw, a, j); }});
  out.push_back({"krippendorff", "krippendorff" + r, "Krippendorff alpha (nominal), missing ratings allowed",
                 [](const std::vector<std::string>& a, bool j) { return run_agreement(Coef::kKrippendorff, a, j); }});
  out.push_back({"anova", "anova FILE.csv --response y --factors a,b [--numeric x] [--interactions]",
                 "Type-II ANOVA with eta^2 and omega^2 per term (unbalanced designs)", run_anova});
  out.push_back({"logit", "logit FILE.csv --response y --factors a,b [--numeric x] [--interactions] [--level L]",
                 "logistic regression with fixed effects; separation reported as an error", run_logit});
}

}  // namespace nf::cli
