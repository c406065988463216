#include "fhir/fhir_server.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>
#include <httplib.h>

#include "util/hash.h"
#include "util/json_depth.h"
#include "util/strings.h"

namespace nf {

namespace {

constexpr int kDefaultCount = 20;
constexpr int kMaxCount = 1000;

// Reads `n` digits at `p` into `out`; false when a character is not a digit.
bool digits(const std::string& s, size_t p, size_t n, int* out) {
  if (p + n > s.size()) return false;
  int v = 0;
  for (size_t i = p; i < p + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Search tokens of a resource: "key=value" strings matched exactly by the search.
std::vector<std::string> tokens_of(const nlohmann::json& r) {
  std::vector<std::string> t;
  auto add_codings = [&t](const std::string& key, const nlohmann::json& cc) {
    if (!cc.is_object()) return;
    if (auto tx = cc.find("text"); tx != cc.end() && tx->is_string()) t.push_back(key + "=" + tx->get<std::string>());
    if (auto cs = cc.find("coding"); cs != cc.end() && cs->is_array())
      for (const auto& c : *cs) {
        if (!c.is_object() || !c.contains("code") || !c["code"].is_string()) continue;
        const std::string code = c["code"].get<std::string>();
        t.push_back(key + "=" + code);
        if (c.contains("system") && c["system"].is_string()) t.push_back(key + "=" + c["system"].get<std::string>() + "|" + code);
      }
  };
  if (auto c = r.find("code"); c != r.end()) add_codings("code", *c);
  if (auto m = r.find("medicationCodeableConcept"); m != r.end()) add_codings("code", *m);
  if (auto c = r.find("category"); c != r.end()) {
    if (c->is_array())
      for (const auto& x : *c) add_codings("category", x);
    else
      add_codings("category", *c);
  }
  if (auto ids = r.find("identifier"); ids != r.end() && ids->is_array())
    for (const auto& id : *ids) {
      if (!id.is_object() || !id.contains("value") || !id["value"].is_string()) continue;
      const std::string v = id["value"].get<std::string>();
      t.push_back("identifier=" + v);
      if (id.contains("system") && id["system"].is_string()) t.push_back("identifier=" + id["system"].get<std::string>() + "|" + v);
    }
  if (auto names = r.find("name"); names != r.end() && names->is_array())
    for (const auto& n : *names) {
      if (!n.is_object()) continue;
      if (n.contains("family") && n["family"].is_string()) {
        t.push_back("family=" + lower(n["family"].get<std::string>()));
        t.push_back("name=" + lower(n["family"].get<std::string>()));
      }
      if (n.contains("given") && n["given"].is_array())
        for (const auto& g : n["given"])
          if (g.is_string()) {
            t.push_back("given=" + lower(g.get<std::string>()));
            t.push_back("name=" + lower(g.get<std::string>()));
          }
    }
  if (auto b = r.find("birthDate"); b != r.end() && b->is_string()) t.push_back("birthdate=" + b->get<std::string>());
  return t;
}

// The patient a resource belongs to ("" when none).
std::string patient_of(const nlohmann::json& r) {
  if (r.value("resourceType", "") == "Patient") return r.value("id", "");
  for (const char* k : {"subject", "patient"}) {
    auto it = r.find(k);
    if (it == r.end() || !it->is_object()) continue;
    const std::string ref = it->value("reference", "");
    return starts_with(ref, "Patient/") ? ref.substr(8) : ref;
  }
  return "";
}

// The clinically relevant time of a resource (NaN when none).
double date_of(const nlohmann::json& r) {
  for (const char* k : {"effectiveDateTime", "authoredOn", "recordedDate", "occurrenceDateTime", "issued"}) {
    auto it = r.find(k);
    if (it == r.end() || !it->is_string()) continue;
    if (auto t = parse_fhir_datetime(it->get<std::string>())) return *t;
  }
  if (auto p = r.find("effectivePeriod"); p != r.end() && p->is_object() && p->contains("start") && (*p)["start"].is_string())
    if (auto t = parse_fhir_datetime((*p)["start"].get<std::string>())) return *t;
  return std::nan("");
}

const std::set<std::string>& known_types() {
  static const std::set<std::string> k{"Patient", "Observation", "MedicationRequest", "ServiceRequest", "Condition",
                                       "Procedure", "MedicationAdministration", "AllergyIntolerance", "Encounter"};
  return k;
}

std::string sorted_query(const httplib::Params& params, const std::set<std::string>& drop) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& [k, val] : params)
    if (!drop.count(k)) v.emplace_back(k, val);
  std::sort(v.begin(), v.end());
  std::string out;
  for (const auto& [k, val] : v) out += (out.empty() ? "" : "&") + k + "=" + httplib::detail::encode_query_param(val);
  return out;
}

FhirResponse error_response(int status, const std::string& code, const std::string& msg) {
  return {status, operation_outcome(code, msg), ""};
}

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

}  // namespace

std::optional<double> parse_fhir_datetime(const std::string& text) {
  int y = 0, mo = 1, d = 1, h = 0, mi = 0, se = 0;
  const std::string& s = text;
  if (!digits(s, 0, 4, &y)) return std::nullopt;
  size_t p = 4;
  if (p < s.size()) {
    if (s[p] != '-' || !digits(s, p + 1, 2, &mo)) return std::nullopt;
    p += 3;
  }
  if (p < s.size()) {
    if (s[p] != '-' || !digits(s, p + 1, 2, &d)) return std::nullopt;
    p += 3;
  }
  double frac = 0.0;
  int offset_s = 0;
  if (p < s.size()) {
    if (s[p] != 'T' || !digits(s, p + 1, 2, &h) || p + 3 >= s.size() || s[p + 3] != ':' || !digits(s, p + 4, 2, &mi))
      return std::nullopt;
    p += 6;
    if (p < s.size() && s[p] == ':') {
      if (!digits(s, p + 1, 2, &se)) return std::nullopt;
      p += 3;
      if (p < s.size() && s[p] == '.') {
        size_t q = p + 1;
        double scale = 0.1;
        while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) {
          frac += (s[q] - '0') * scale;
          scale /= 10;
          ++q;
        }
        if (q == p + 1) return std::nullopt;
        p = q;
      }
    }
    if (p < s.size()) {
      if (s[p] == 'Z') {
        ++p;
      } else if (s[p] == '+' || s[p] == '-') {
        int oh = 0, om = 0;
        if (!digits(s, p + 1, 2, &oh) || p + 3 >= s.size() || s[p + 3] != ':' || !digits(s, p + 4, 2, &om))
          return std::nullopt;
        if (oh > 14 || om > 59) return std::nullopt;
        offset_s = (s[p] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        p += 6;
      } else {
        return std::nullopt;
      }
    }
  }
  if (p != s.size()) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  const time_t t = timegm(&tm);
  return static_cast<double>(t) + frac - offset_s;
}

nlohmann::json operation_outcome(const std::string& code, const std::string& diagnostics) {
  return {{"resourceType", "OperationOutcome"},
          {"issue", nlohmann::json::array({{{"severity", "error"}, {"code", code}, {"diagnostics", diagnostics}}})}};
}

const std::vector<std::string>& FhirServer::writable_types() {
  static const std::vector<std::string> k{"Observation", "MedicationRequest", "ServiceRequest", "Condition",
                                          "Procedure",   "MedicationAdministration", "AllergyIntolerance"};
  return k;
}

FhirServer::FhirServer(std::string base_url) : base_url_(std::move(base_url)) {
  if (base_url_.empty() || base_url_.back() != '/') base_url_ += '/';
}

FhirServer::~FhirServer() { sqlite3_close(db_); }

Result<std::unique_ptr<FhirServer>> FhirServer::create(std::string base_url) {
  std::unique_ptr<FhirServer> s(new FhirServer(std::move(base_url)));
  if (sqlite3_open(":memory:", &s->db_) != SQLITE_OK) return Internal("fhir server: cannot open an in-memory SQLite database");
  const char* ddl =
      "CREATE TABLE resources (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, id TEXT NOT NULL,"
      " session TEXT NOT NULL, patient TEXT NOT NULL, date_s REAL, tokens TEXT NOT NULL, body TEXT NOT NULL,"
      " UNIQUE(type, id, session));"
      "CREATE INDEX resources_search ON resources(type, patient);";
  char* err = nullptr;
  if (sqlite3_exec(s->db_, ddl, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    return Internal("fhir server: schema: " + m);
  }
  return s;
}

namespace {

/// Inserts resource `r` (its resourceType and id) for `session`; `written` marks a resource
/// an agent's POST created (token "nf-written"), so a session's writes can be counted.
Status insert(sqlite3* db, const nlohmann::json& r, const std::string& session, bool written = false) {
  Stmt st;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO resources(type, id, session, patient, date_s, tokens, body) VALUES (?,?,?,?,?,?,?)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return Internal(std::string("fhir server: ") + sqlite3_errmsg(db));
  const std::string type = r["resourceType"].get<std::string>(), id = r["id"].get<std::string>();
  const std::string patient = patient_of(r), body = r.dump();
  std::string tokens = written ? "\nnf-written\n" : "\n";
  for (const auto& t : tokens_of(r)) tokens += t + "\n";
  sqlite3_bind_text(st.s, 1, type.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 3, session.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 4, patient.c_str(), -1, SQLITE_TRANSIENT);
  const double d = date_of(r);
  if (std::isnan(d)) sqlite3_bind_null(st.s, 5);
  else sqlite3_bind_double(st.s, 5, d);
  sqlite3_bind_text(st.s, 6, tokens.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 7, body.c_str(), -1, SQLITE_TRANSIENT);
  const int rc = sqlite3_step(st.s);
  if (rc == SQLITE_CONSTRAINT) return InvalidArgument(fmt::format("fhir server: {}/{} is already held", type, id));
  if (rc != SQLITE_DONE) return Internal(std::string("fhir server: ") + sqlite3_errmsg(db));
  return Status::Ok();
}

}  // namespace

Status FhirServer::put(const nlohmann::json& r) {
  if (!r.is_object() || !r.contains("resourceType") || !r["resourceType"].is_string() || !r.contains("id") ||
      !r["id"].is_string())
    return InvalidArgument("fhir server: a resource needs a string resourceType and id");
  std::lock_guard<std::mutex> lock(mu_);
  return insert(db_, r, "");
}

int64_t FhirServer::count(const std::string& type) const {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st;
  sqlite3_prepare_v2(db_, type.empty() ? "SELECT COUNT(*) FROM resources WHERE session = ''"
                                       : "SELECT COUNT(*) FROM resources WHERE session = '' AND type = ?",
                     -1, &st.s, nullptr);
  if (!type.empty()) sqlite3_bind_text(st.s, 1, type.c_str(), -1, SQLITE_TRANSIENT);
  return sqlite3_step(st.s) == SQLITE_ROW ? sqlite3_column_int64(st.s, 0) : 0;
}

FhirResponse FhirServer::handle(const FhirRequest& req, const std::string& session) {
  try {
    std::string target = req.target;
    if (!target.empty() && target.front() == '/') target.erase(0, 1);
    if (req.method == "POST") return write(req, session, true);
    if (req.method != "GET")
      return error_response(405, "not-supported", fmt::format("method {} is not supported", req.method));
    const size_t q = target.find('?');
    const std::string path = target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    if (path.empty())
      return error_response(400, "not-supported", "a GET to the base URL needs a resource type (e.g. Patient?identifier=...)");
    const size_t slash = path.find('/');
    const std::string type = path.substr(0, slash);
    if (!known_types().count(type)) return error_response(404, "not-found", fmt::format("unknown resource type '{}'", type));
    if (slash != std::string::npos) return read(type, path.substr(slash + 1), session);
    return search(type, query, session);
  } catch (const std::exception& e) {
    return error_response(500, "exception", std::string("internal error: ") + e.what());
  }
}

FhirResponse FhirServer::dry_run(const FhirRequest& req, const std::string& session) {
  try {
    return write(req, session, false);
  } catch (const std::exception& e) {
    return error_response(500, "exception", std::string("internal error: ") + e.what());
  }
}

FhirResponse FhirServer::read(const std::string& type, const std::string& id, const std::string& session) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st;
  sqlite3_prepare_v2(db_, "SELECT body FROM resources WHERE type = ? AND id = ? AND (session = '' OR session = ?)", -1,
                     &st.s, nullptr);
  sqlite3_bind_text(st.s, 1, type.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 3, session.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st.s) != SQLITE_ROW)
    return error_response(404, "not-found", fmt::format("resource {}/{} is not known", type, id));
  return {200, nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0))), ""};
}

FhirResponse FhirServer::search(const std::string& type, const std::string& query, const std::string& session) {
  httplib::Params params;
  httplib::detail::parse_query_text(query, params);
  static const std::set<std::string> kControl{"_count", "_sort", "_getpagesoffset", "_format", "_pretty"};
  static const std::set<std::string> kPatientParams{"identifier", "_id", "family", "given", "name", "birthdate"};
  static const std::set<std::string> kClinicalParams{"patient", "subject", "code", "date", "category", "_id"};
  const auto& allowed = type == "Patient" ? kPatientParams : kClinicalParams;
  int count = kDefaultCount;
  int64_t offset = 0;
  std::string sort;
  std::string patient;
  std::vector<std::pair<std::string, double>> dates;  // (prefix, seconds)
  std::vector<std::pair<std::string, std::vector<std::string>>> token_filters;  // key -> any of values
  std::string id_filter;
  for (const auto& [k, v] : params) {
    if (k == "_count") {
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0) return error_response(400, "invalid", fmt::format("_count: '{}' is not a non-negative integer", v));
      count = static_cast<int>(std::min<long>(n, kMaxCount));
    } else if (k == "_getpagesoffset") {
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0)
        return error_response(400, "invalid", fmt::format("_getpagesoffset: '{}' is not a non-negative integer", v));
      offset = n;
    } else if (k == "_sort") {
      if (v != "date" && v != "-date" && v != "_id" && v != "-_id")
        return error_response(400, "invalid", fmt::format("_sort: '{}' is not supported (date, -date, _id, -_id)", v));
      sort = v;
    } else if (k == "_format" || k == "_pretty") {
      continue;
    } else if (!allowed.count(k)) {
      return error_response(400, "invalid", fmt::format("unknown search parameter '{}' for resource type {}", k, type));
    } else if (k == "patient" || k == "subject") {
      patient = starts_with(v, "Patient/") ? v.substr(8) : v;
    } else if (k == "_id") {
      id_filter = v;
    } else if (k == "date") {
      std::string pre = "eq", val = v;
      if (v.size() > 2 && std::isalpha(static_cast<unsigned char>(v[0])) && std::isalpha(static_cast<unsigned char>(v[1]))) {
        pre = v.substr(0, 2);
        val = v.substr(2);
      }
      static const std::set<std::string> kPre{"eq", "ge", "gt", "le", "lt"};
      auto t = parse_fhir_datetime(val);
      if (!kPre.count(pre) || !t)
        return error_response(400, "invalid", fmt::format("date: '{}' is not [eq|ge|gt|le|lt]<FHIR dateTime>", v));
      dates.emplace_back(pre, *t);
    } else {
      std::vector<std::string> any;
      for (const auto& part : split(v, ',')) {
        std::string val = part;
        if (k == "family" || k == "given" || k == "name") val = lower(val);
        any.push_back(k + "=" + val);
      }
      token_filters.emplace_back(k, std::move(any));
    }
  }
  struct Row {
    int64_t seq;
    std::string id;
    double date;
    std::string body;
  };
  std::vector<Row> rows;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt st;
    sqlite3_prepare_v2(db_,
                       patient.empty()
                           ? "SELECT seq, id, date_s, tokens, body FROM resources WHERE type = ? AND (session = '' OR session = ?) ORDER BY seq"
                           : "SELECT seq, id, date_s, tokens, body FROM resources WHERE type = ? AND (session = '' OR session = ?) AND patient = ? ORDER BY seq",
                       -1, &st.s, nullptr);
    sqlite3_bind_text(st.s, 1, type.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 2, session.c_str(), -1, SQLITE_TRANSIENT);
    if (!patient.empty()) sqlite3_bind_text(st.s, 3, patient.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st.s) == SQLITE_ROW) {
      const std::string id = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 1));
      if (!id_filter.empty() && id != id_filter) continue;
      const double date = sqlite3_column_type(st.s, 2) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(st.s, 2);
      const std::string tokens = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 3));
      bool keep = true;
      for (const auto& [k, any] : token_filters) {
        bool hit = false;
        for (const auto& t : any) hit = hit || tokens.find("\n" + t + "\n") != std::string::npos;
        keep = keep && hit;
      }
      for (const auto& [pre, t] : dates) {
        if (std::isnan(date)) keep = false;
        else if (pre == "eq") keep = keep && std::fabs(date - t) < 0.5;
        else if (pre == "ge") keep = keep && date >= t;
        else if (pre == "gt") keep = keep && date > t;
        else if (pre == "le") keep = keep && date <= t;
        else if (pre == "lt") keep = keep && date < t;
      }
      if (keep)
        rows.push_back({sqlite3_column_int64(st.s, 0), id, date,
                        reinterpret_cast<const char*>(sqlite3_column_text(st.s, 4))});
    }
  }
  if (sort == "date" || sort == "-date") {
    const bool desc = sort == "-date";
    std::stable_sort(rows.begin(), rows.end(), [desc](const Row& a, const Row& b) {
      const bool an = std::isnan(a.date), bn = std::isnan(b.date);
      if (an || bn) return !an && bn;  // undated rows last
      return desc ? a.date > b.date : a.date < b.date;
    });
  } else if (sort == "_id" || sort == "-_id") {
    const bool desc = sort == "-_id";
    std::stable_sort(rows.begin(), rows.end(), [desc](const Row& a, const Row& b) { return desc ? a.id > b.id : a.id < b.id; });
  }
  const int64_t total = static_cast<int64_t>(rows.size());
  nlohmann::json bundle = {{"resourceType", "Bundle"}, {"type", "searchset"}, {"total", total}};
  const std::string q = sorted_query(params, {"_getpagesoffset"});
  bundle["id"] = sha256_hex(type + "?" + q + "#" + session).substr(0, 16);
  const std::string self = base_url_ + type + (q.empty() ? "" : "?" + q);
  bundle["link"] = nlohmann::json::array({{{"relation", "self"}, {"url", offset > 0 ? self + (q.empty() ? "?" : "&") + "_getpagesoffset=" + std::to_string(offset) : self}}});
  if (count > 0 && offset + count < total) {
    httplib::Params next = params;
    next.erase("_getpagesoffset");
    next.erase("_count");
    next.emplace("_count", std::to_string(count));
    next.emplace("_getpagesoffset", std::to_string(offset + count));
    bundle["link"].push_back({{"relation", "next"}, {"url", base_url_ + type + "?" + sorted_query(next, {})}});
  }
  nlohmann::json entries = nlohmann::json::array();
  for (int64_t i = offset; i < total && i < offset + count; ++i) {
    const Row& r = rows[static_cast<size_t>(i)];
    entries.push_back({{"fullUrl", base_url_ + type + "/" + r.id},
                       {"resource", nlohmann::json::parse(r.body)},
                       {"search", {{"mode", "match"}}}});
  }
  if (!entries.empty()) bundle["entry"] = std::move(entries);
  return {200, std::move(bundle), ""};
}

FhirResponse FhirServer::write(const FhirRequest& req, const std::string& session, bool store) {
  std::string target = req.target;
  if (!target.empty() && target.front() == '/') target.erase(0, 1);
  const std::string path = target.substr(0, target.find('?'));
  if (path.empty())
    return error_response(400, "structure",
                          "POST to the base URL is a transaction or batch and needs a Bundle; the body could not be "
                          "read as one (post a single resource to its typed endpoint, e.g. [base]ServiceRequest)");
  if (path.find('/') != std::string::npos)
    return error_response(400, "not-supported", fmt::format("POST to '{}': create goes to [base]Type, not to an instance", path));
  const auto& wt = writable_types();
  if (std::find(wt.begin(), wt.end(), path) == wt.end())
    return error_response(known_types().count(path) ? 405 : 404, "not-supported",
                          fmt::format("resource type '{}' cannot be created on this server", path));
  if (Status deep = check_json_depth(req.body, "the request body"); !deep.ok())  // a hostile client
    return error_response(400, "structure", deep.message());
  nlohmann::json r = nlohmann::json::parse(req.body, nullptr, false);
  if (r.is_discarded()) return error_response(400, "structure", "the request body is not valid JSON");
  if (!r.is_object()) return error_response(400, "structure", "the request body is not a JSON object");
  auto rt = r.find("resourceType");
  if (rt == r.end() || !rt->is_string()) return error_response(400, "required", "the body has no resourceType");
  if (*rt != path)
    return error_response(400, "processing",
                          fmt::format("resourceType '{}' does not match the endpoint [base]{}", rt->get<std::string>(), path));
  // Required elements and bound codes (FHIR R4 cardinality 1..1 / required bindings).
  static const std::map<std::string, std::vector<std::string>> kRequired{
      {"Observation", {"status", "code"}},
      {"MedicationRequest", {"status", "intent", "subject"}},
      {"ServiceRequest", {"status", "intent", "subject"}},
      {"Condition", {"subject"}},
      {"Procedure", {"status", "subject"}},
      {"MedicationAdministration", {"status", "subject"}},
      {"AllergyIntolerance", {"patient"}}};
  static const std::map<std::string, std::map<std::string, std::set<std::string>>> kCodes{
      {"Observation", {{"status", {"registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error", "unknown"}}}},
      {"MedicationRequest",
       {{"status", {"active", "on-hold", "cancelled", "completed", "entered-in-error", "stopped", "draft", "unknown"}},
        {"intent", {"proposal", "plan", "order", "original-order", "reflex-order", "filler-order", "instance-order", "option"}}}},
      {"ServiceRequest",
       {{"status", {"draft", "active", "on-hold", "revoked", "completed", "entered-in-error", "unknown"}},
        {"intent", {"proposal", "plan", "directive", "order", "original-order", "reflex-order", "filler-order", "instance-order", "option"}}}}};
  for (const auto& field : kRequired.at(path))
    if (!r.contains(field) || r[field].is_null())
      return error_response(400, "required", fmt::format("{}.{} is required (cardinality 1..1)", path, field));
  if (path == "MedicationRequest" && !r.contains("medicationCodeableConcept") && !r.contains("medicationReference"))
    return error_response(400, "required", "MedicationRequest.medication[x] is required");
  if (auto it = kCodes.find(path); it != kCodes.end())
    for (const auto& [field, allowed] : it->second) {
      if (!r.contains(field)) continue;
      if (!r[field].is_string() || !allowed.count(r[field].get<std::string>()))
        return error_response(400, "code-invalid", fmt::format("{}.{}: '{}' is not a code of the required value set", path,
                                                               field, r[field].is_string() ? r[field].get<std::string>() : r[field].dump()));
    }
  for (const char* k : {"subject", "patient"}) {
    if (!r.contains(k)) continue;
    const auto& ref = r[k];
    if (!ref.is_object() || !ref.contains("reference") || !ref["reference"].is_string())
      return error_response(400, "structure", fmt::format("{}.{} must be a Reference with a string reference", path, k));
    const std::string s = ref["reference"].get<std::string>();
    if (!starts_with(s, "Patient/"))
      return error_response(400, "invalid", fmt::format("{}.{}: reference '{}' is not Patient/<id>", path, k, s));
    if (read("Patient", s.substr(8), session).status != 200)
      return error_response(400, "not-found", fmt::format("{}.{}: resource {} is not known to this server", path, k, s));
  }
  for (const char* k : {"effectiveDateTime", "authoredOn", "occurrenceDateTime", "recordedDate", "issued"})
    if (r.contains(k) && (!r[k].is_string() || !parse_fhir_datetime(r[k].get<std::string>())))
      return error_response(400, "value", fmt::format("{}.{}: '{}' is not a FHIR dateTime", path, k, r[k].dump()));
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  {
    Stmt st;
    sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM resources WHERE session = ? AND seq > 0 AND tokens LIKE '%\nnf-written\n%'",
                       -1, &st.s, nullptr);
    sqlite3_bind_text(st.s, 1, session.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st.s) == SQLITE_ROW) n = sqlite3_column_int64(st.s, 0);
  }
  r.erase("id");
  const std::string id = "w" + sha256_hex(path + "\n" + r.dump() + "\n" + std::to_string(n)).substr(0, 15);
  r["id"] = id;
  r["meta"] = {{"versionId", "1"}};
  FhirResponse out{201, r, base_url_ + path + "/" + id + "/_history/1"};
  if (!store) return out;
  if (Status st = insert(db_, r, session, /*written=*/true); !st.ok())
    return error_response(500, "exception", "storage failed: " + st.message());
  return out;
}

}  // namespace nf
