#include "task/fhir_agent_task.h"

#include <algorithm>

#include <fmt/format.h>
#include <httplib.h>

#include "task/prompt_protocol.h"
#include "util/strings.h"

namespace nf {

namespace {

class EmbeddedEnv final : public FhirEnvironment {
 public:
  explicit EmbeddedEnv(std::unique_ptr<FhirServer> s) : s_(std::move(s)) {}
  std::string base_url() const override { return s_->base_url(); }
  FhirResponse call(const FhirRequest& req, const std::string& session) override { return s_->handle(req, session); }
  std::optional<FhirResponse> dry_run(const FhirRequest& req, const std::string& session) override {
    return s_->dry_run(req, session);
  }

 private:
  std::unique_ptr<FhirServer> s_;
};

class ExternalEnv final : public FhirEnvironment {
 public:
  ExternalEnv(std::string base, std::string host, std::string path) : base_(std::move(base)), host_(std::move(host)), path_(std::move(path)) {}
  std::string base_url() const override { return base_; }
  FhirResponse call(const FhirRequest& req, const std::string& /*session*/) override {
    httplib::Client cli(host_);
    cli.set_connection_timeout(10);
    cli.set_read_timeout(60);
    const std::string target = path_ + req.target;
    auto res = req.method == "POST" ? cli.Post(target.c_str(), req.body, "application/fhir+json") : cli.Get(target.c_str());
    if (!res) return {0, operation_outcome("transient", "transport error: " + httplib::to_string(res.error())), ""};
    FhirResponse out;
    out.status = res->status;
    out.body = nlohmann::json::parse(res->body, nullptr, false);
    if (out.body.is_discarded()) out.body = res->body;
    out.location = res->get_header_value("Location");
    return out;
  }
  std::optional<FhirResponse> dry_run(const FhirRequest&, const std::string&) override { return std::nullopt; }

 private:
  std::string base_, host_, path_;
};

std::string trim(std::string s) {
  const auto ws = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && ws(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && ws(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

const char* kFinishHint = "If you have answered every question and done every requested task, call FINISH.";

}  // namespace

std::unique_ptr<FhirEnvironment> embedded_fhir_environment(std::unique_ptr<FhirServer> server) {
  return std::make_unique<EmbeddedEnv>(std::move(server));
}

Result<std::unique_ptr<FhirEnvironment>> external_fhir_environment(const std::string& base_url) {
  std::string base = base_url;
  if (base.empty() || base.back() != '/') base += '/';
  const size_t scheme = base.find("://");
  if (scheme == std::string::npos || (base.substr(0, scheme) != "http" && base.substr(0, scheme) != "https"))
    return InvalidArgument(fmt::format("fhir_base: '{}' is not an http(s) URL (or 'embedded')", base_url));
  const size_t slash = base.find('/', scheme + 3);
  return std::unique_ptr<FhirEnvironment>(
      std::make_unique<ExternalEnv>(base, base.substr(0, slash), base.substr(slash)));
}

FhirAction parse_fhir_action(const std::string& reply) {
  FhirAction a;
  std::string r = trim(reply);
  // Drop ``` fences (``` or ```lang on their own).
  if (starts_with(r, "```")) {
    const size_t nl = r.find('\n');
    r = nl == std::string::npos ? "" : r.substr(nl + 1);
    if (const size_t end = r.rfind("```"); end != std::string::npos) r = r.substr(0, end);
    r = trim(r);
  }
  if (starts_with(r, "GET ")) {
    a.kind = FhirAction::Kind::kGet;
    a.url = trim(r.substr(4, r.find('\n') == std::string::npos ? std::string::npos : r.find('\n') - 4));
    if (a.url.empty()) {
      a.kind = FhirAction::Kind::kInvalid;
      a.error = "GET without a URL";
    }
    return a;
  }
  if (starts_with(r, "POST ")) {
    a.kind = FhirAction::Kind::kPost;
    const size_t nl = r.find('\n');
    a.url = trim(r.substr(5, nl == std::string::npos ? std::string::npos : nl - 5));
    a.body_text = nl == std::string::npos ? "" : trim(r.substr(nl + 1));
    a.body = nlohmann::json::parse(a.body_text, nullptr, false);
    a.body_is_json = !a.body.is_discarded() && !a.body_text.empty();
    if (!a.body_is_json) a.body = nullptr;
    if (a.url.empty()) {
      a.kind = FhirAction::Kind::kInvalid;
      a.error = "POST without a URL";
    }
    return a;
  }
  if (starts_with(r, "FINISH(")) {
    const size_t close = r.rfind(')');
    if (close == std::string::npos || close < 7) {
      a.error = "FINISH( without a closing ')'";
      return a;
    }
    a.kind = FhirAction::Kind::kFinish;
    a.answer_text = r.substr(7, close - 7);
    nlohmann::json j = nlohmann::json::parse(a.answer_text, nullptr, false);
    a.answer = !j.is_discarded() && j.is_array() ? j : nlohmann::json(nullptr);
    return a;
  }
  a.error = r.empty() ? "empty reply" : "the reply starts with none of GET, POST, FINISH(";
  return a;
}

std::string canonical_fhir_target(const std::string& url, const std::string& base) {
  std::string rel;
  if (starts_with(url, base)) rel = url.substr(base.size());
  else if (!base.empty() && url == base.substr(0, base.size() - 1)) rel = "";
  else return "!" + url;
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  const size_t q = rel.find('?');
  if (q == std::string::npos) return rel;
  httplib::Params params;
  httplib::detail::parse_query_text(rel.substr(q + 1), params);
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& [k, val] : params)
    if (k != "_format" && k != "_pretty") v.emplace_back(k, val);
  std::sort(v.begin(), v.end());
  std::string out = rel.substr(0, q);
  for (size_t i = 0; i < v.size(); ++i)
    out += (i == 0 ? "?" : "&") + v[i].first + "=" + httplib::detail::encode_query_param(v[i].second);
  return out;
}

std::string render_fhir_prompt(const MedAgentTask& task, const nlohmann::json& funcs, const std::string& base_url) {
  nlohmann::json shown = funcs;
  for (auto& f : shown) {
    std::string name = f["name"].get<std::string>();
    for (size_t p; (p = name.find("{api_base}/")) != std::string::npos;) name.replace(p, 11, base_url);
    for (size_t p; (p = name.find("{api_base}")) != std::string::npos;) name.replace(p, 10, base_url);
    f["name"] = name;
  }
  return fmt::format(
      "{} You receive a question and a list of functions; answer it by calling the functions, one call per reply.\n"
      "1. To call a GET function, reply: GET url?param_name1=param_value1&param_name2=param_value2...\n"
      "2. To call a POST function, reply: POST url, then on the next line the payload as JSON.\n"
      "3. When you have the answers to every question and have done every requested task, reply: "
      "FINISH([answer1, answer2, ...]) where the list is valid JSON.\n"
      "Reply with exactly one of these three forms and no other text.\n"
      "The functions, as JSON:\n{}\nContext: {}\nQuestion: {}",
      kFhirAgentPreamble, shown.dump(), task.context, task.instruction);
}

Result<std::unique_ptr<FhirAgentTask>> FhirAgentTask::create(std::vector<MedAgentTask> tasks, std::vector<ChartFact> facts,
                                                             nlohmann::json funcs, std::shared_ptr<FhirEnvironment> env,
                                                             FhirAgentOptions options) {
  if (options.feedback != "benchmark" && options.feedback != "record")
    return InvalidArgument(fmt::format("task_options.feedback: '{}' is not benchmark or record", options.feedback));
  if (options.get_cut_chars < 100)
    return InvalidArgument(fmt::format("task_options.get_cut_chars: must be >= 100, got {}", options.get_cut_chars));
  if (options.max_rounds < 1 || options.max_rounds > 64)
    return InvalidArgument(fmt::format("task_options.max_rounds: must be in 1..64, got {}", options.max_rounds));
  std::unique_ptr<FhirAgentTask> t(new FhirAgentTask());
  for (auto& f : facts) t->facts_[f.task_id] = f;
  for (const auto& task : tasks) {
    if (!t->facts_.count(task.id))
      return InvalidArgument(fmt::format("task {}: no chart facts (task_truth_audit.json covers task3/5/8/9/10)", task.id));
    t->items_.push_back({task.id, task.family,
                         {{"family", task.family}, {"instruction", task.instruction}, {"context", task.context}, {"mrn", task.mrn}}});
  }
  t->tasks_ = std::move(tasks);
  t->funcs_ = std::move(funcs);
  t->env_ = std::move(env);
  t->options_ = options;
  return t;
}

Status FhirAgentTask::prepare(const std::vector<std::string>& conditions, uint64_t /*study_seed*/) {
  for (const auto& c : conditions)
    if (c != "none") return InvalidArgument(fmt::format("condition '{}': task fhir_agent knows only 'none'", c));
  return Status::Ok();
}

TaskDrawResult FhirAgentTask::run(size_t item_index, const std::string& /*condition*/, const DrawContext& ctx,
                                  const CallFn& call) const {
  TaskDrawResult res;
  const MedAgentTask& task = tasks_[item_index];
  const std::string base = env_->base_url();
  const std::string session = ctx.key.to_string();
  std::vector<ChatMessage> messages{{"user", render_fhir_prompt(task, funcs_, base)}};
  nlohmann::json trajectory = nlohmann::json::array();
  nlohmann::json orders = nlohmann::json::array();
  std::vector<IssuedOrder> issued;
  std::string end = "round_limit";
  nlohmann::json failing_turn = nullptr;
  nlohmann::json answer = nullptr;
  std::string answer_text;
  bool finished = false;
  int rejected = 0;
  for (int turn = 0; turn < options_.max_rounds; ++turn) {
    ChatRequest req = draw_request(ctx, messages);
    ChatResponse resp = call(req);
    ++res.calls;
    res.request = req.to_openai_json();
    res.response = resp;
    res.transcript.push_back({{"turn", turn}, {"content", resp.content}, {"finish_reason", resp.finish_reason},
                              {"kind", static_cast<int>(resp.kind)}, {"error", resp.error}});
    if (resp.kind != ResponseKind::kOk) {
      res.status = resp.kind == ResponseKind::kRefused ? DrawStatus::kRefused : DrawStatus::kApiError;
      res.error = fmt::format("turn {}: {}", turn, resp.error.empty() ? "the model call failed" : resp.error);
      end = "api_error";
      failing_turn = turn;
      break;
    }
    const FhirAction a = parse_fhir_action(resp.content);
    nlohmann::json step = {{"turn", turn}, {"reply", resp.content}};
    std::string feedback;
    if (a.kind == FhirAction::Kind::kInvalid) {
      step["action"] = {{"method", "INVALID"}, {"error", a.error}};
      trajectory.push_back(step);
      res.status = DrawStatus::kParseError;
      res.error = fmt::format("turn {}: {}", turn, a.error);
      end = "parse_error";
      failing_turn = turn;
      break;
    }
    if (a.kind == FhirAction::Kind::kFinish) {
      step["action"] = {{"method", "FINISH"}, {"answer", a.answer}, {"answer_text", a.answer_text}};
      trajectory.push_back(step);
      answer = a.answer;
      answer_text = a.answer_text;
      finished = true;
      end = "finish";
      break;
    }
    const std::string target = canonical_fhir_target(a.url, base);
    const bool routable = target.empty() || target[0] != '!';
    std::string raw_target = target;  // the target as sent (unsorted) to the server
    if (routable) {
      raw_target = starts_with(a.url, base) ? a.url.substr(base.size()) : "";
    }
    if (a.kind == FhirAction::Kind::kGet) {
      step["action"] = {{"method", "GET"}, {"url", target}, {"body", nullptr}};
      FhirResponse r = routable ? env_->call({"GET", raw_target, ""}, session)
                                : FhirResponse{0, operation_outcome("not-found", "the URL is not under the FHIR base " + base), ""};
      const std::string text = r.body.is_string() ? r.body.get<std::string>() : r.body.dump();
      const std::string shown = text.size() > static_cast<size_t>(options_.get_cut_chars)
                                    ? text.substr(0, static_cast<size_t>(options_.get_cut_chars))
                                    : text;
      step["status"] = r.status;
      step["response"] = shown;
      step["response_chars"] = text.size();
      step["truncated"] = shown.size() < text.size();
      feedback = r.status == 0 ? "Your GET request failed: " + shown
                               : fmt::format("Response to your GET request (HTTP {}):\n{}\n{}", r.status, shown, kFinishHint);
    } else {  // POST
      const std::string endpoint = target.substr(0, target.find('?'));
      step["action"] = {{"method", "POST"}, {"url", target},
                        {"body", a.body_is_json ? a.body : nlohmann::json(a.body_text)}, {"body_is_json", a.body_is_json}};
      const FhirRequest fr{"POST", raw_target, a.body_text};
      std::optional<FhirResponse> server;
      if (options_.feedback == "record") {
        server = routable ? env_->call(fr, session)
                          : FhirResponse{0, operation_outcome("not-found", "the URL is not under the FHIR base " + base), ""};
      } else if (routable) {
        server = env_->dry_run(fr, session);
      } else {
        server = FhirResponse{0, operation_outcome("not-found", "the URL is not under the FHIR base " + base), ""};
      }
      nlohmann::json server_json = nullptr;
      if (server)
        server_json = {{"status", server->status}, {"location", server->location},
                       {"body", server->status >= 400 || server->status == 0 ? server->body : nlohmann::json(nullptr)}};
      step["server"] = server_json;
      if (options_.feedback == "record") {
        const std::string text = server->body.is_string() ? server->body.get<std::string>() : server->body.dump();
        step["status"] = server->status;
        feedback = server->status == 0 ? "Your POST request failed: " + text
                                       : fmt::format("Response to your POST request (HTTP {}{}):\n{}\n{}", server->status,
                                                     server->location.empty() ? "" : ", Location: " + server->location,
                                                     text, kFinishHint);
      } else {
        step["status"] = a.body_is_json ? 200 : 400;
        feedback = a.body_is_json ? std::string("Your POST request was accepted and executed. ") + kFinishHint
                                  : "Your POST request is invalid: the body is not JSON.";
      }
      if (a.body_is_json) {
        const bool rej = server && (server->status >= 400 || server->status == 0);
        rejected += rej ? 1 : 0;
        orders.push_back({{"turn", turn}, {"endpoint", endpoint}, {"payload", a.body},
                          {"server_status", server ? nlohmann::json(server->status) : nlohmann::json(nullptr)},
                          {"rejected", server ? nlohmann::json(rej) : nlohmann::json(nullptr)}});
        issued.push_back({endpoint, a.body});
      }
    }
    trajectory.push_back(step);
    messages.push_back({"assistant", resp.content});
    messages.push_back({"user", feedback});
  }
  GradeResult verdict{false, ""};
  const bool scored = res.status == DrawStatus::kOk;
  if (scored) verdict = grade_fhir_run(task, facts_.at(task.id), issued, answer, finished);
  res.detail = {{"feedback", options_.feedback}, {"end", end},        {"failing_turn", failing_turn},
                {"trajectory", trajectory},      {"orders", orders}, {"answer", answer},
                {"answer_text", answer_text},    {"family", task.family}};
  if (scored) res.detail["verdict"] = {{"pass", verdict.pass}, {"reason", verdict.reason}};
  if (scored) {
    res.outcomes = {{"pass", verdict.pass ? 1.0 : 0.0, verdict.pass ? "pass" : "fail"},
                    {"orders", static_cast<double>(issued.size()), ""},
                    {"rejected_writes", static_cast<double>(rejected), ""}};
  }
  return res;
}

}  // namespace nf
