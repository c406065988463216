// Chat JSONL and probe-sheet readers (data/chat.h; seed 004 §2.3, §2.6).
#include "data/chat.h"

#include <cstddef>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/test_data.h"
#include "util/rng.h"

namespace nf {
namespace {

using testing::TempDir;
using testing::write_text;

std::string sheet_path() { return testing::data_file("missing-info-judges/annotation_sheet.md"); }
std::string key_path() { return testing::data_file("missing-info-judges/key.json"); }

// ---- read_chat_jsonl -------------------------------------------------------------------

TEST(ReadChatJsonl, ParsesIdsClustersMessagesAndMeta) {
  TempDir dir;
  write_text(dir / "c.jsonl",
             "{\"id\": \"a\", \"cluster\": \"k1\", \"theme\": \"t\", \"messages\": [{\"role\": \"system\", "
             "\"content\": \"S\"}, {\"role\": \"user\", \"content\": \"Hi. There.\"}]}\n"
             "\n"
             "{\"id\": 7, \"messages\": [{\"role\": \"user\", \"content\": \"Q1\"}, {\"role\": \"assistant\", "
             "\"content\": \"A1\"}, {\"role\": \"user\", \"content\": \"Q2\"}]}\n");
  auto items = read_chat_jsonl(dir / "c.jsonl");
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].id, "a");
  EXPECT_EQ((*items)[0].cluster, "k1");
  ASSERT_EQ((*items)[0].messages.size(), 2u);
  EXPECT_EQ((*items)[0].messages[0].role, "system");
  EXPECT_EQ((*items)[0].messages[1].content, "Hi. There.");
  EXPECT_EQ((*items)[0].meta.value("theme", ""), "t");
  EXPECT_FALSE((*items)[0].meta.contains("messages"));
  EXPECT_EQ((*items)[1].id, "7");
  EXPECT_EQ((*items)[1].cluster, "7");  // default: the id
  EXPECT_EQ((*items)[1].messages.size(), 3u);
  EXPECT_TRUE((*items)[1].response.empty());
}

TEST(ReadChatJsonl, LimitAndFieldOverrides) {
  TempDir dir;
  write_text(dir / "c.jsonl",
             "{\"key\": \"x\", \"grp\": \"g\", \"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\n"
             "{\"key\": \"y\", \"grp\": \"g\", \"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n");
  auto items = read_chat_jsonl(dir / "c.jsonl", 1, "key", "grp");
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ((*items)[0].id, "x");
  EXPECT_EQ((*items)[0].cluster, "g");
}

TEST(ReadChatJsonl, ShippedSampleReads) {
  auto items = read_chat_jsonl(std::string(NF_SOURCE_DIR) + "/data/sample-chats.jsonl");
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_GE(items->size(), 6u);
  bool multi = false, system = false;
  for (const auto& it : *items) {
    multi = multi || it.messages.size() > 1;
    system = system || it.messages.front().role == "system";
    EXPECT_EQ(it.messages.back().role, "user") << it.id;
  }
  EXPECT_TRUE(multi);
  EXPECT_TRUE(system);
}

struct BadCase {
  const char* line;
  const char* expect;  // a substring of the message
};

TEST(ReadChatJsonl, ErrorsNameFileLineAndField) {
  const BadCase cases[] = {
      {"{not json", ":2: malformed JSON"},
      {"{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}", ":2: id: missing"},
      {"{\"id\": \"\", \"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}", ":2: id: empty"},
      {"{\"id\": \"b\"}", ":2: messages: missing"},
      {"{\"id\": \"b\", \"messages\": []}", ":2: messages: empty"},
      {"{\"id\": \"b\", \"messages\": [{\"role\": \"usr\", \"content\": \"a\"}]}", ":2: messages[0].role: unknown role 'usr'"},
      {"{\"id\": \"b\", \"messages\": [{\"role\": \"user\", \"content\": 3}]}", ":2: messages[0].content: expected a string"},
      {"{\"id\": \"b\", \"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": "
       "\"b\"}]}",
       ":2: messages[1].role: the last turn must be 'user'"},
      {"{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}", ":2: id: duplicate id 'a' (first on line 1)"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    const std::string p = dir / "bad.jsonl";
    write_text(p, std::string("{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"ok\"}]}\n") + c.line + "\n");
    auto r = read_chat_jsonl(p);
    ASSERT_FALSE(r.ok()) << c.line;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.line;
    EXPECT_NE(r.status().message().find(p + c.expect), std::string::npos) << r.status().message();
  }
}

TEST(ReadChatJsonl, MissingFileIsNotFound) {
  auto r = read_chat_jsonl("/nonexistent/chats.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// ---- read_probe_sheet on the released sheet -------------------------------------------

TEST(ReadProbeSheet, RealSheetWithoutKey) {
  auto items = read_probe_sheet(sheet_path());
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 50u);
  EXPECT_EQ(items->front().id, "A001");
  EXPECT_EQ(items->back().id, "A050");
  const ChatItem& a1 = items->front();
  EXPECT_EQ(a1.cluster, "A001");
  ASSERT_EQ(a1.messages.size(), 3u);
  EXPECT_EQ(a1.messages[0].role, "user");
  EXPECT_EQ(a1.messages[1].role, "assistant");
  EXPECT_EQ(a1.messages.back().role, "user");
  EXPECT_EQ(a1.messages.back().content, "So, is it recommended o");
  EXPECT_EQ(a1.response.rfind("It looks like your message got cut off", 0), 0u) << a1.response.substr(0, 80);
  // The response keeps its own markdown headings and stops before the label line.
  EXPECT_NE(a1.response.find("### Official Recommendations"), std::string::npos);
  EXPECT_EQ(a1.response.find("YOUR LABEL"), std::string::npos);
  std::set<std::string> ids;
  std::vector<std::string> empty_responses;
  for (const auto& it : *items) {
    ids.insert(it.id);
    EXPECT_EQ(it.messages.back().role, "user") << it.id;
    EXPECT_FALSE(it.messages.back().content.empty()) << it.id;
    if (it.response.empty()) empty_responses.push_back(it.id);
    EXPECT_EQ(it.response.find("**YOUR LABEL"), std::string::npos) << it.id;
    for (const auto& m : it.messages) {
      EXPECT_EQ(m.content.find("**USER:**"), std::string::npos) << it.id;
      EXPECT_EQ(m.content.find("### Assistant response"), std::string::npos) << it.id;
    }
  }
  EXPECT_EQ(ids.size(), 50u);
  // The released sheet shows one empty answer (A047); it is kept, not an error.
  EXPECT_EQ(empty_responses, std::vector<std::string>{"A047"});
}

TEST(ReadProbeSheet, RealSheetWithKeyClustersByPrompt) {
  auto items = read_probe_sheet(sheet_path(), key_path());
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 50u);
  std::set<std::string> clusters, subjects;
  for (const auto& it : *items) {
    clusters.insert(it.cluster);
    subjects.insert(it.meta.value("subject_model", ""));
    EXPECT_EQ(it.cluster, it.meta.value("prompt_id", "")) << it.id;
  }
  EXPECT_EQ(clusters.size(), 33u);  // seed 004 §3.1: 33 unique perturbed prompts
  EXPECT_EQ(subjects.size(), 4u);
  EXPECT_EQ(items->front().meta.value("subject_model", ""), "opus-4_8-high");
  EXPECT_EQ(items->front().cluster, "b7a82324-73ee-4996-8f71-8f455f789e90");
}

// ---- read_probe_sheet errors on small sheets -----------------------------------------------

const char* kGoodSection =
    "## A001\n\n### Conversation (information partially removed)\n\n**USER:** First line\nsecond line\n\n"
    "**ASSISTANT:** Reply.\n\n**USER:** Is it o\n\n### Assistant response\n\nAnswer text.\n\n### A heading\n"
    "More.\n\n**YOUR LABEL for A001 (1 = met / 0 = not met): ____**\n\n---\n\n";

TEST(ReadProbeSheet, SmallSheetParses) {
  TempDir dir;
  write_text(dir / "s.md", std::string("# Sheet\n\nPreamble.\n\n---\n\n") + kGoodSection);
  auto items = read_probe_sheet(dir / "s.md");
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ((*items)[0].messages[0].content, "First line\nsecond line");
  EXPECT_EQ((*items)[0].messages[2].content, "Is it o");
  EXPECT_EQ((*items)[0].response, "Answer text.\n\n### A heading\nMore.");
}

TEST(ReadProbeSheet, MissingResponseNamesFileLineAndId) {
  TempDir dir;
  const std::string p = dir / "s.md";
  write_text(p, std::string(kGoodSection) +
                    "## A002\n\n### Conversation (information partially removed)\n\n**USER:** Hello\n\n---\n");
  auto r = read_probe_sheet(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(p + ":23: A002: no '### Assistant response'"), std::string::npos)
      << r.status().message();
}

TEST(ReadProbeSheet, LastTurnNotUserNamesTheTurnLine) {
  TempDir dir;
  const std::string p = dir / "s.md";
  write_text(p, "## A009\n### Conversation (information partially removed)\n**USER:** Q\n**ASSISTANT:** A\n"
                "### Assistant response\nR\n**YOUR LABEL for A009**\n");
  auto r = read_probe_sheet(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(p + ":4: A009: the conversation must end with a **USER:** turn"),
            std::string::npos)
      << r.status().message();
}

TEST(ReadProbeSheet, DuplicateIdNamesBothLines) {
  TempDir dir;
  const std::string p = dir / "s.md";
  write_text(p, std::string(kGoodSection) + kGoodSection);
  auto r = read_probe_sheet(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(p + ":23: A001: duplicate annotation id (first on line 1)"), std::string::npos)
      << r.status().message();
}

TEST(ReadProbeSheet, ResponseWithoutLabelLineIsAnError) {
  TempDir dir;
  const std::string p = dir / "s.md";
  write_text(p, "## A003\n### Conversation (information partially removed)\n**USER:** Q\n### Assistant response\nR\n");
  auto r = read_probe_sheet(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("A003"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("YOUR LABEL"), std::string::npos) << r.status().message();
}

TEST(ReadProbeSheet, KeyWithoutEntryIsNotFound) {
  TempDir dir;
  write_text(dir / "s.md", kGoodSection);
  write_text(dir / "key.json", "{\"A777\": {\"subject_model\": \"gpt-x\", \"item\": 1, \"prompt_id\": \"p\"}}");
  auto r = read_probe_sheet(dir / "s.md", dir / "key.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("key.json has no entry for A001"), std::string::npos) << r.status().message();
  EXPECT_EQ(probe_sheet_key_path(dir / "s.md"), dir / "key.json");
  EXPECT_EQ(probe_sheet_key_path("/nonexistent/s.md"), "");
}

// Parsers of untrusted text never crash and fail only with InvalidArgument: line-level
// mutations (drop, duplicate, swap) of a valid two-section sheet and of a chat JSONL file.
TEST(ChatReaders, LineMutationsAreOkOrInvalidArgument) {
  const std::string sheet = std::string(kGoodSection) +
                            "## A002\n### Conversation (information partially removed)\n**USER:** A. B.\n"
                            "### Assistant response\nR2\n**YOUR LABEL for A002**\n";
  const std::string jsonl =
      "{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}\n"
      "{\"id\": \"b\", \"messages\": [{\"role\": \"system\", \"content\": \"s\"}, {\"role\": \"user\", "
      "\"content\": \"y\"}]}\n";
  for (const std::string* text : {&sheet, &jsonl}) {
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < text->size();) {
      size_t nl = text->find('\n', pos);
      if (nl == std::string::npos) nl = text->size();
      lines.push_back(text->substr(pos, nl - pos));
      pos = nl + 1;
    }
    Rng rng(7);
    TempDir dir;
    int ok = 0, bad = 0;
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<std::string> m = lines;
      const int edits = 1 + static_cast<int>(rng.uniform_int(3));
      for (int e = 0; e < edits && !m.empty(); ++e) {
        const size_t i = rng.uniform_int(m.size());
        switch (rng.uniform_int(4)) {
          case 0: m.erase(m.begin() + static_cast<std::ptrdiff_t>(i)); break;
          case 1: m.insert(m.begin() + static_cast<std::ptrdiff_t>(i), m[i]); break;
          case 2: std::swap(m[i], m[rng.uniform_int(m.size())]); break;
          default: m[i] = m[i].substr(0, rng.uniform_int(m[i].size() + 1)); break;
        }
      }
      std::string mutated;
      for (const auto& l : m) mutated += l + "\n";
      write_text(dir / "f", mutated);
      Status st;
      if (text == &sheet) {
        auto r = read_probe_sheet(dir / "f");
        st = r.status();
        if (r.ok()) {
          for (const auto& it : *r) EXPECT_EQ(it.messages.back().role, "user") << mutated;
        }
      } else {
        auto r = read_chat_jsonl(dir / "f");
        st = r.status();
        if (r.ok()) {
          for (const auto& it : *r) EXPECT_EQ(it.messages.back().role, "user") << mutated;
        }
      }
      if (st.ok()) {
        ++ok;
      } else {
        ++bad;
        EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.message() << "\n" << mutated;
        EXPECT_NE(st.message().find(dir / "f"), std::string::npos) << st.message();
      }
    }
    EXPECT_GT(ok, 0);
    EXPECT_GT(bad, 0);
  }
}

}  // namespace
}  // namespace nf
