// The SAX reader of chat.completion bodies (issue 14 item 5) against the DOM reader it
// replaces on the hot path: every body gives the same fields and classification, the
// common shape is read without the DOM, and anything else falls back to it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/openai.h"

namespace nf {
namespace {

// Every field parse_openai_body may set, as one comparable string.
std::string fields(bool ok, const ChatResponse& r) {
  return "ok=" + std::to_string(ok) + " kind=" + std::to_string(static_cast<int>(r.kind)) + " content=[" + r.content +
         "] finish=[" + r.finish_reason + "] model=[" + r.served_model + "] fp=[" + r.system_fingerprint +
         "] pt=" + std::to_string(r.prompt_tokens) + " ct=" + std::to_string(r.completion_tokens) + " error=[" +
         r.error + "] logprobs=" + r.logprobs.dump();
}

// parse_openai_body (SAX first) and parse_openai_body_dom give the same result on `body`,
// from a fresh response and from one whose fields are already set.
void expect_same(const std::string& body) {
  for (bool prefilled : {false, true}) {
    ChatResponse a, b;
    if (prefilled) {
      for (ChatResponse* r : {&a, &b}) {
        r->content = "old";
        r->finish_reason = "old-finish";
        r->served_model = "old-model";
        r->system_fingerprint = "old-fp";
        r->prompt_tokens = 7;
        r->completion_tokens = 8;
      }
    }
    const bool ok_a = parse_openai_body(body, a);
    const bool ok_b = parse_openai_body_dom(body, b);
    EXPECT_EQ(fields(ok_a, a), fields(ok_b, b)) << body << (prefilled ? " (prefilled)" : "");
  }
}

const char* kServeSimBody =
    R"({"choices":[{"finish_reason":"stop","index":0,"logprobs":null,"message":{"content":"Working through it.\n\n<answer>D</answer>","role":"assistant"}}],"created":1796143343,"id":"chatcmpl-sim-869d226ca6fb9b55","model":"sim-mcq-1","object":"chat.completion","system_fingerprint":"sim-9a074bf68a43","usage":{"completion_tokens":20,"prompt_tokens":161,"total_tokens":181}})";

TEST(OpenAiSax, CommonBodiesAreReadWithoutTheDomAndAgreeWithIt) {
  const std::vector<std::string> common = {
      kServeSimBody,
      R"({"choices":[{"message":{"content":null,"role":"assistant"},"finish_reason":"length"}]})",
      R"({"choices":[{"message":{"content":"x"},"finish_reason":"content_filter"}],"model":"m"})",
      R"({"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]})",
      R"({"choices":[{"message":{"content":"B","refusal":null},"finish_reason":"stop"}]})",
      R"({"choices":[{"message":{"content":"B","refusal":""}}]})",
      R"({"choices":[{"message":{"content":"C"},"finish_reason":null}]})",
      R"({"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function"}]},"finish_reason":"tool_calls"}]})",
      R"({"choices":[{"message":{"content":"\u00e9\ud83d\ude00 \"q\""}},{"message":{"content":[1,2]}}]})",
      R"({"usage":{"prompt_tokens":3.5,"completion_tokens":-2},"choices":[{"message":{"content":"a"}}],"model":7})",
      R"({"foo":{"choices":[],"model":"decoy","usage":{"prompt_tokens":1}},"choices":[{"message":{"content":"a"}}]})",
      R"({"choices":[{"message":{"content":"a","extra":{"content":[1],"refusal":"decoy"}}}],"system_fingerprint":null})",
      R"({"choices":[{"message":{"content":"a"}}],"model":"m","model2":"n","usage":{"prompt_tokens":18446744073709551}})",
  };
  for (const std::string& body : common) {
    ChatResponse r;
    EXPECT_TRUE(parse_openai_body_sax(body, r).has_value()) << "expected the SAX path: " << body;
    expect_same(body);
  }
  ChatResponse r;
  ASSERT_TRUE(parse_openai_body(kServeSimBody, r));
  EXPECT_EQ(r.content, "Working through it.\n\n<answer>D</answer>");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.served_model, "sim-mcq-1");
  EXPECT_EQ(r.system_fingerprint, "sim-9a074bf68a43");
  EXPECT_EQ(r.prompt_tokens, 161);
  EXPECT_EQ(r.completion_tokens, 20);
  EXPECT_EQ(r.kind, ResponseKind::kOk);
}

TEST(OpenAiSax, EveryOtherBodyFallsBackToTheDomAndAgreesWithIt) {
  const std::vector<std::string> other = {
      "",
      "null",
      "[]",
      R"("text")",
      R"({})",
      R"({"choices":[]})",
      R"({"choices":{}})",
      R"({"choices":"x"})",
      R"({"choices":[1]})",
      R"({"choices":[{}]})",
      R"({"choices":[{"message":"x"}]})",
      R"({"choices":[{"message":[]}]})",
      R"({"choices":[{"message":{"content":5}}]})",
      R"({"choices":[{"message":{"content":true}}]})",
      R"({"choices":[{"message":{"content":{"text":"a"}}}]})",
      R"({"choices":[{"message":{"content":[{"type":"text","text":"Answer: "},{"type":"text","text":"D"}]}}]})",
      R"({"choices":[{"message":{"content":"a"},"logprobs":{"content":[{"token":"A","logprob":-0.1}]}}]})",
      R"({"choices":[{"message":{"content":"a"},"logprobs":[]}]})",
      R"({"choices":[{"message":{"content":"a"},"logprobs":0}]})",
      R"({"choices":[{"message":{"content":"a"}}],"choices":[]})",
      R"({"choices":[{"message":{"content":"a"},"message":{"content":"b"}}]})",
      R"({"choices":[{"message":{"content":"a","content":"b"}}]})",
      R"({"choices":[{"message":{"content":"a","refusal":"no","refusal":null}}]})",
      R"({"choices":[{"message":{"content":"a"},"finish_reason":"stop","finish_reason":"content_filter"}]})",
      R"({"model":"a","model":"b","choices":[{"message":{"content":"a"}}]})",
      R"({"usage":{"prompt_tokens":1,"prompt_tokens":2},"choices":[{"message":{"content":"a"}}]})",
      R"({"usage":{"prompt_tokens":18446744073709551615},"choices":[{"message":{"content":"a"}}]})",
      R"({"usage":5,"choices":[{"message":{"content":"a"}}]})",
      R"({"choices":[{"message":{"content":"a"}}]} trailing)",
      R"({"choices":[{"message":{"content":"a"}})",
      "{\"choices\":[{\"message\":{\"content\":\"\xff\"}}]}",
  };
  for (const std::string& body : other) {
    ChatResponse r;
    r.content = "untouched";
    EXPECT_FALSE(parse_openai_body_sax(body, r).has_value()) << "expected the DOM fallback: " << body;
    EXPECT_EQ(r.content, "untouched") << body;
    expect_same(body);
  }
  ChatResponse parts;
  ASSERT_TRUE(parse_openai_body(other[15], parts));
  EXPECT_EQ(parts.content, "Answer: D");
  ChatResponse lp;
  ASSERT_TRUE(parse_openai_body(other[16], lp));
  EXPECT_TRUE(lp.logprobs.is_object());
}

// Every combination of a few variants of each field the reader looks at, compared with the
// DOM reader (4 x 5 x 6 x 4 x 4 x 3 = 5,760 bodies).
TEST(OpenAiSax, AgreesWithTheDomOnEveryCombinationOfFieldVariants) {
  const std::vector<std::string> content = {R"("B")", "null", R"([{"type":"text","text":"x"}])", "1"};
  const std::vector<std::string> refusal = {"", R"(,"refusal":null)", R"(,"refusal":"")", R"(,"refusal":"no")",
                                            R"(,"refusal":3)"};
  const std::vector<std::string> finish = {"", R"(,"finish_reason":"stop")", R"(,"finish_reason":"content_filter")",
                                           R"(,"finish_reason":null)", R"(,"finish_reason":1)",
                                           R"(,"logprobs":null,"finish_reason":"length")"};
  const std::vector<std::string> usage = {"", R"(,"usage":{"prompt_tokens":5,"completion_tokens":6})",
                                          R"(,"usage":{"prompt_tokens":"5"})", R"(,"usage":[])"};
  const std::vector<std::string> model = {"", R"(,"model":"m","system_fingerprint":"fp")", R"(,"model":null)",
                                          R"(,"model":"m","model":"n")"};
  const std::vector<std::string> tail = {"", R"(,{"message":{"content":"other"}})", R"(,5)"};
  int sax_taken = 0, total = 0;
  for (const auto& c : content)
    for (const auto& rf : refusal)
      for (const auto& f : finish)
        for (const auto& u : usage)
          for (const auto& m : model)
            for (const auto& t : tail) {
              const std::string body =
                  R"({"choices":[{"message":{"content":)" + c + rf + "}" + f + "}" + t + "]" + u + m + "}";
              ChatResponse probe;
              sax_taken += parse_openai_body_sax(body, probe).has_value();
              ++total;
              expect_same(body);
            }
  EXPECT_EQ(total, 5760);
  // The SAX path: content a string or null (2 of 4 variants), usage absent or an object
  // (3 of 4), model not given twice (3 of 4), and every refusal, finish and tail variant
  // (a refusal or finish_reason of another type is ignored by both readers).
  EXPECT_EQ(sax_taken, 2 * 5 * 6 * 3 * 3 * 3);
}

}  // namespace
}  // namespace nf
