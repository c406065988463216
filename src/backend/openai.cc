#include "backend/openai.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "backend/finish_reason.h"
#include "backend/http.h"
#include "util/json_depth.h"

namespace nf {

namespace {

// The fields parse_openai_body keeps, read from nlohmann's SAX events without building a
// DOM (issue 14 item 5: the reply's DOM and its allocations were a measured part of each
// draw's CPU). It takes only the common shape of a chat.completion body: an object whose
// choices[0] is an object with a message object, content a string or null, logprobs null
// or absent, and no key it reads given twice. Anything else (content parts, logprobs,
// duplicate keys, a wrong type where a container is expected, a body that does not
// parse) sets `fallback` and stops: the DOM reader then decides, so both paths always
// give the same result.
class OpenAiReplySax {
 public:
  using json = nlohmann::json;

  bool fallback = false;
  std::string content, refusal;  // content "" when null or absent
  bool refusal_is_string = false;
  // Set only when given with the type the DOM reader takes (else the response keeps its own).
  std::optional<std::string> finish_reason, model, fingerprint;
  std::optional<int64_t> prompt_tokens, completion_tokens;

  OpenAiReplySax() { stack_.reserve(8); }

  /// True when the body had the common shape (the fields above are then final).
  bool complete() const { return !fallback && got_choices_ && got_choice0_ && got_message_; }

  bool null() {
    switch (slot()) {
      case Slot::kChoices: case Slot::kChoice0: case Slot::kMessage: case Slot::kUsage: return stop();
      case Slot::kContent: content.clear(); return true;  // null content: ""
      default: return true;                                // logprobs null, or ignored
    }
  }
  bool boolean(bool) { return scalar(); }
  bool number_integer(json::number_integer_t v) { return integer(v); }
  bool number_unsigned(json::number_unsigned_t v) {
    if (v > static_cast<json::number_unsigned_t>(std::numeric_limits<int64_t>::max())) return stop();
    return integer(static_cast<int64_t>(v));
  }
  bool number_float(json::number_float_t, const json::string_t&) { return scalar(); }
  bool string(json::string_t& v) {
    switch (slot()) {
      case Slot::kContent: content = v; return true;
      case Slot::kRefusal: refusal = v; refusal_is_string = true; return true;
      case Slot::kFinish: finish_reason = v; return true;
      case Slot::kModel: model = v; return true;
      case Slot::kFingerprint: fingerprint = v; return true;
      case Slot::kChoices: case Slot::kChoice0: case Slot::kMessage: case Slot::kUsage: case Slot::kLogprobs:
        return stop();
      default: return true;
    }
  }
  bool binary(json::binary_t&) { return stop(); }  // not produced by the JSON reader
  bool start_object(std::size_t) {
    if (stack_.size() >= kMaxJsonDepth) return stop();  // too deep: the DOM reader refuses it
    if (stack_.empty()) {
      stack_.push_back({Frame::kRoot});
      return true;
    }
    switch (slot()) {
      case Slot::kChoice0: got_choice0_ = true; stack_.push_back({Frame::kChoice0}); return true;
      case Slot::kMessage: got_message_ = true; stack_.push_back({Frame::kMessage}); return true;
      case Slot::kUsage: stack_.push_back({Frame::kUsage}); return true;
      case Slot::kChoices: case Slot::kContent: case Slot::kLogprobs: return stop();
      default: stack_.push_back({Frame::kOther}); return true;
    }
  }
  bool key(json::string_t& k) {
    Level& top = stack_.back();
    Slot s = Slot::kNone;
    switch (top.frame) {
      case Frame::kRoot:
        s = k == "choices" ? Slot::kChoices : k == "model" ? Slot::kModel
            : k == "system_fingerprint" ? Slot::kFingerprint : k == "usage" ? Slot::kUsage : Slot::kNone;
        break;
      case Frame::kChoice0:
        s = k == "message" ? Slot::kMessage : k == "finish_reason" ? Slot::kFinish
            : k == "logprobs" ? Slot::kLogprobs : Slot::kNone;
        break;
      case Frame::kMessage:
        s = k == "content" ? Slot::kContent : k == "refusal" ? Slot::kRefusal : Slot::kNone;
        break;
      case Frame::kUsage:
        s = k == "prompt_tokens" ? Slot::kPrompt : k == "completion_tokens" ? Slot::kCompletion : Slot::kNone;
        break;
      default: break;
    }
    if (s != Slot::kNone) {
      const uint32_t bit = 1u << static_cast<unsigned>(s);
      if (top.seen & bit) return stop();  // a key given twice: the DOM keeps the last one
      top.seen |= bit;
    }
    top.key = s;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    if (stack_.empty() || stack_.size() >= kMaxJsonDepth) return stop();  // not an object, or too deep
    switch (slot()) {
      case Slot::kChoices: got_choices_ = true; stack_.push_back({Frame::kChoices}); return true;
      case Slot::kChoice0: case Slot::kMessage: case Slot::kUsage: case Slot::kContent: case Slot::kLogprobs:
        return stop();  // content parts, logprobs: the DOM reads them
      default: stack_.push_back({Frame::kOther}); return true;
    }
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return stop(); }

 private:
  enum class Frame : uint8_t { kOther, kRoot, kChoices, kChoice0, kMessage, kUsage };
  enum class Slot : uint8_t {
    kNone, kChoices, kChoice0, kMessage, kContent, kRefusal, kFinish, kLogprobs, kModel, kFingerprint, kUsage,
    kPrompt, kCompletion
  };
  struct Level {
    Frame frame;
    Slot key = Slot::kNone;  // an object's key whose value comes next
    uint32_t seen = 0;       // the keys read so far (bits by Slot)
    size_t index = 0;        // an array's next element
  };

  bool stop() {
    fallback = true;
    return false;
  }
  // What the value that starts now is (consumes an array element).
  Slot slot() {
    if (stack_.empty()) return Slot::kNone;  // a scalar document: no root object
    Level& top = stack_.back();
    if (top.frame == Frame::kChoices) return top.index++ == 0 ? Slot::kChoice0 : Slot::kNone;
    if (top.frame == Frame::kOther) return Slot::kNone;
    return top.key;
  }
  bool scalar() {
    switch (slot()) {
      case Slot::kChoices: case Slot::kChoice0: case Slot::kMessage: case Slot::kUsage: case Slot::kContent:
      case Slot::kLogprobs:
        return stop();
      default: return true;  // finish_reason, model, ... of another type: ignored, as the DOM does
    }
  }
  bool integer(int64_t v) {
    switch (slot()) {
      case Slot::kPrompt: prompt_tokens = v; return true;
      case Slot::kCompletion: completion_tokens = v; return true;
      case Slot::kChoices: case Slot::kChoice0: case Slot::kMessage: case Slot::kUsage: case Slot::kContent:
      case Slot::kLogprobs:
        return stop();
      default: return true;
    }
  }

  std::vector<Level> stack_;
  bool got_choices_ = false, got_choice0_ = false, got_message_ = false;
};

// The refusal classification shared by both readers.
void classify_refusal(ChatResponse& r, bool refused_field, const std::string& refusal) {
  r.kind = ResponseKind::kOk;
  if (r.finish_reason == "content_filter" || refused_field) {
    r.kind = ResponseKind::kRefused;
    r.error = refused_field ? "refusal: " + refusal.substr(0, 200) : "content_filter";
  } else if (std::string e = abnormal_finish_error(r.finish_reason); !e.empty()) {
    r.kind = ResponseKind::kApiError;  // an aborted generation is no answer
    r.error = std::move(e);
  }
}

}  // namespace

std::optional<bool> parse_openai_body_sax(const std::string& body, ChatResponse& r) {
  OpenAiReplySax sax;
  const bool parsed = nlohmann::json::sax_parse(body, &sax);
  if (!parsed || !sax.complete()) return std::nullopt;
  r.content = std::move(sax.content);
  if (sax.finish_reason) r.finish_reason = std::move(*sax.finish_reason);
  if (sax.model) r.served_model = std::move(*sax.model);
  if (sax.fingerprint) r.system_fingerprint = std::move(*sax.fingerprint);
  if (sax.prompt_tokens) r.prompt_tokens = *sax.prompt_tokens;
  if (sax.completion_tokens) r.completion_tokens = *sax.completion_tokens;
  classify_refusal(r, sax.refusal_is_string && !sax.refusal.empty(), sax.refusal);
  return true;
}

bool parse_openai_body(const std::string& body, ChatResponse& r) {
  if (std::optional<bool> fast = parse_openai_body_sax(body, r)) return *fast;
  return parse_openai_body_dom(body, r);
}

bool parse_openai_body_dom(const std::string& body, ChatResponse& r) {
  // A reply nested past kMaxJsonDepth would crash the copies and dumps below by recursion.
  if (Status deep = check_json_depth(body, "reply"); !deep.ok()) {
    r.error = std::string(deep.message());
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return false;
  const auto& c0 = (*choices)[0];
  if (!c0.is_object()) return false;
  const auto msg = c0.find("message");
  if (msg == c0.end() || !msg->is_object()) return false;
  r.content.clear();
  if (const auto content = msg->find("content"); content != msg->end()) {
    if (content->is_string()) {
      r.content = content->get<std::string>();
    } else if (content->is_array()) {
      for (const auto& part : *content) {
        if (part.is_object() && part.contains("text") && part["text"].is_string()) r.content += part["text"].get<std::string>();
      }
    } else if (!content->is_null()) {
      return false;
    }
  }
  const auto fr = c0.find("finish_reason");
  if (fr != c0.end() && fr->is_string()) r.finish_reason = fr->get<std::string>();
  if (auto m = j.find("model"); m != j.end() && m->is_string()) r.served_model = m->get<std::string>();
  if (auto f = j.find("system_fingerprint"); f != j.end() && f->is_string()) {
    r.system_fingerprint = f->get<std::string>();
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) {
      r.prompt_tokens = p->get<int64_t>();
    }
    if (auto p = u->find("completion_tokens"); p != u->end() && p->is_number_integer()) {
      r.completion_tokens = p->get<int64_t>();
    }
  }
  if (auto lp = c0.find("logprobs"); lp != c0.end() && !lp->is_null()) r.logprobs = *lp;
  const auto refusal = msg->find("refusal");
  const bool refused_field = refusal != msg->end() && refusal->is_string() && !refusal->get<std::string>().empty();
  classify_refusal(r, refused_field, refused_field ? refusal->get<std::string>() : std::string());
  return true;
}

std::string strip_url_userinfo(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  if (end == std::string::npos) end = url.size();
  const size_t at = url.rfind('@', end - 1);
  if (at == std::string::npos || at < start || end == start) return url;
  return url.substr(0, start) + url.substr(at + 1);
}

OpenAiBackend::OpenAiBackend(OpenAiOptions options) : options_(std::move(options)) {
  pool_ = std::make_unique<CurlHandlePool>();
  base_url_ = options_.base_url;
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  std::vector<std::string> headers = {"Content-Type: application/json", "Expect:"};
  if (!options_.api_key.empty()) headers.push_back("Authorization: Bearer " + options_.api_key);
  limiter_ = make_endpoint_limiter(options_);
  endpoint_ = make_chat_endpoint(options_, base_url_ + "/chat/completions", std::move(headers), limiter_.get(),
                                 pool_.get(), &health_);
}

std::unique_ptr<RateLimiter> make_endpoint_limiter(const OpenAiOptions& options) {
  AdaptiveOptions adaptive;
  adaptive.enabled = options.adaptive;
  adaptive.max_in_flight = options.max_in_flight;
  return std::make_unique<RateLimiter>(options.rpm, options.tpm, options.clock ? *options.clock : real_clock(),
                                       adaptive);
}

ChatEndpoint make_chat_endpoint(const OpenAiOptions& options, std::string url, std::vector<std::string> headers,
                                RateLimiter* limiter, CurlHandlePool* pool, EndpointHealth* health) {
  ChatEndpoint ep;
  ep.url = std::move(url);
  ep.headers = std::move(headers);
  ep.timeout_s = options.timeout_s;
  ep.connect_timeout_s = options.connect_timeout_s;
  ep.policy.max_retries = std::max(0, options.max_retries);
  ep.policy.retry_after_cap_s = options.retry_after_cap_s;
  ep.policy.base_delay_s = options.base_delay_s;
  ep.policy.max_delay_s = options.max_delay_s;
  ep.secret = options.api_key;
  ep.clock = options.clock;
  ep.limiter = limiter;
  ep.pool = pool;
  ep.health = health;
  ep.abandon = options.abandon;
  return ep;
}

std::string OpenAiBackend::identity() const { return "openai:" + strip_url_userinfo(base_url_); }

AsyncChatCall OpenAiBackend::async_call(const ChatRequest& request, const std::string* openai_body_text) {
  AsyncChatCall call;
  call.endpoint = &endpoint_;
  call.payload = openai_body_text
                     ? *openai_body_text
                     : request.to_openai_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  call.parse = parse_openai_body;
  call.rng = Rng::stream(options_.jitter_seed, {calls_.fetch_add(1)});
  call.max_tokens = request.max_tokens;
  return call;
}

ChatResponse OpenAiBackend::complete(const ChatRequest& request) {
  Rng rng = Rng::stream(options_.jitter_seed, {calls_.fetch_add(1)});
  const std::string payload =
      request.to_openai_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return post_chat(endpoint_, payload, parse_openai_body, rng, request.max_tokens);
}

namespace {

std::string trim_ws(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

}  // namespace

AnswerTokenProbs answer_token_probabilities(const nlohmann::json& logprobs, const std::vector<std::string>& letters) {
  AnswerTokenProbs out;
  if (!logprobs.is_object()) {
    out.note = "no logprobs in the response";
    return out;
  }
  const auto content = logprobs.find("content");
  if (content == logprobs.end() || !content->is_array() || content->empty()) {
    out.note = "logprobs.content is missing or empty";
    return out;
  }
  std::string text;
  std::vector<size_t> start;
  for (const auto& t : *content) {
    start.push_back(text.size());
    if (t.is_object() && t.contains("token") && t["token"].is_string()) text += t["token"].get<std::string>();
  }
  auto is_letter = [&](const std::string& tok) {
    return std::find(letters.begin(), letters.end(), tok) != letters.end();
  };
  std::string lower = text;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t tag = lower.rfind("<answer>");
  std::optional<size_t> pos;
  if (tag != std::string::npos) {
    size_t q = tag + 8;
    while (q < text.size() && (text[q] == ' ' || text[q] == '\n' || text[q] == '\t' || text[q] == '\r')) ++q;
    if (q >= text.size()) {
      out.note = "nothing follows the last <answer> tag";
      return out;
    }
    size_t i = std::upper_bound(start.begin(), start.end(), q) - start.begin() - 1;
    const auto& t = (*content)[i];
    const std::string tok = t.is_object() && t.contains("token") && t["token"].is_string() ? t["token"].get<std::string>() : "";
    if (!is_letter(trim_ws(tok))) {
      out.note = fmt::format("the answer letter shares token {} ('{}') with other text", i, tok);
      return out;
    }
    pos = i;
  } else {
    for (size_t i = content->size(); i-- > 0;) {
      const auto& t = (*content)[i];
      if (t.is_object() && t.contains("token") && t["token"].is_string() && is_letter(trim_ws(t["token"].get<std::string>()))) {
        pos = i;
        break;
      }
    }
    if (!pos) {
      out.note = "no generated token is an option letter";
      return out;
    }
  }
  const auto& at = (*content)[*pos];
  out.position = pos;
  out.token = at["token"].get<std::string>();
  if (at.contains("logprob") && at["logprob"].is_number()) out.token_prob = std::exp(at["logprob"].get<double>());
  for (const auto& l : letters) out.probs[l] = std::nullopt;
  // top_logprobs null, absent or [] all mean "no alternatives listed" (issue 13 item 8):
  // every option unknown except the sampled token's own probability, added below.
  const auto top = at.find("top_logprobs");
  const nlohmann::json no_alternatives = nlohmann::json::array();
  const nlohmann::json& top_list = top != at.end() && top->is_array() ? *top : no_alternatives;
  if (top_list.empty()) out.note = "the answer token has no top_logprobs: only its own probability is known";
  bool listed_sampled = false;
  for (const auto& t : top_list) {
    if (!t.is_object() || !t.contains("token") || !t["token"].is_string() || !t.contains("logprob") ||
        !t["logprob"].is_number())
      continue;
    if (t["token"].get<std::string>() == out.token) listed_sampled = true;
    const std::string tok = trim_ws(t["token"].get<std::string>());
    auto it = out.probs.find(tok);
    if (it == out.probs.end()) {
      out.top_has_non_letters = true;
      continue;
    }
    it->second = it->second.value_or(0.0) + std::exp(t["logprob"].get<double>());
    out.listed_letters.insert(tok);
  }
  // The sampled token's own probability, unless the top list already carried it.
  if (!listed_sampled && out.token_prob) {
    auto it = out.probs.find(trim_ws(out.token));
    if (it != out.probs.end()) it->second = it->second.value_or(0.0) + *out.token_prob;
  }
  return out;
}

std::map<std::string, std::optional<double>> option_probabilities(const nlohmann::json& logprobs,
                                                                   const std::vector<std::string>& letters) {
  return answer_token_probabilities(logprobs, letters).probs;
}

}  // namespace nf
