// Every command block of README.md and docs/*.md runs as written (issue 12 item 6).
//
// The rules (also in docs/snippets.md):
// - A block is an indented (4 spaces, after a blank line) or fenced code block. It is a
//   COMMAND block when its first line, after optional VAR=value prefixes, starts with
//   `noisefloor` or `build/release/noisefloor`. Anything else (YAML, JSON, outputs, the
//   install/build lines that CI runs itself) is not a command and is not run.
// - `<!-- snippet: skip (reason) -->` as the last non-blank line before a block skips it;
//   `<!-- snippet: needs NOISEFLOOR_DATA ... -->`, or a block that mentions NOISEFLOOR_DATA
//   or ../shared/data, needs the real data and is skipped (with a message) without it.
// - Each block runs with bash (`set -e -o pipefail`) in a fresh directory holding
//   `examples/` and `data/` (links into the source tree), `build/release/noisefloor` (the
//   binary under test, also first on PATH as `noisefloor`), `../shared/data` (the real
//   data), `model_a.csv` (the FairMedAgent model-A draws converted from the real data, as
//   the README describes) and NOISEFLOOR_DATA exported when the real data is present.
// - Port 8089 is replaced by a free port; a `serve-sim` line runs in the background (`&` is
//   added when missing), the harness waits until it listens, and it must still be alive
//   when the block ends (its flags parsed); it is stopped afterwards.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_data.h"

namespace nf {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

struct Block {
  std::string file;
  int line = 0;
  std::string marker;  // the snippet marker before it, or ""
  std::vector<std::string> lines;
};

std::vector<Block> blocks_of(const std::string& path, const std::string& name) {
  std::vector<std::string> lines;
  {
    std::istringstream in(slurp(path));
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  std::vector<Block> out;
  auto marker_before = [&](size_t i) {
    for (size_t k = i; k-- > 0;) {
      if (lines[k].find_first_not_of(" \t") == std::string::npos) continue;
      return lines[k].rfind("<!-- snippet:", 0) == 0 ? lines[k] : std::string();
    }
    return std::string();
  };
  for (size_t i = 0; i < lines.size();) {
    const std::string& l = lines[i];
    if (l.rfind("```", 0) == 0) {
      Block b{name, static_cast<int>(i + 1), marker_before(i), {}};
      size_t j = i + 1;
      for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) b.lines.push_back(lines[j]);
      out.push_back(b);
      i = j + 1;
    } else if (l.rfind("    ", 0) == 0 && (i == 0 || lines[i - 1].find_first_not_of(" \t") == std::string::npos) &&
               l.find_first_not_of(' ') != std::string::npos && l[l.find_first_not_of(' ')] != '-' &&
               l[l.find_first_not_of(' ')] != '*') {
      Block b{name, static_cast<int>(i + 1), marker_before(i), {}};
      size_t j = i;
      for (; j < lines.size() && (lines[j].rfind("    ", 0) == 0 || lines[j].empty()); ++j)
        b.lines.push_back(lines[j].size() >= 4 ? lines[j].substr(4) : "");
      while (!b.lines.empty() && b.lines.back().empty()) b.lines.pop_back();
      out.push_back(b);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

bool is_command_block(const Block& b) {
  static const std::regex cmd(R"(^([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(build/release/)?noisefloor(\s|$))");
  return !b.lines.empty() && std::regex_search(b.lines.front(), cmd);
}

std::string text_of(const Block& b) {
  std::string t;
  for (const auto& l : b.lines) t += l + "\n";
  return t;
}

// The bash script for one block (see the rules above).
std::string script_of(const Block& b, int port) {
  std::string s =
      "set -e -o pipefail\nservers=()\ncleanup() { for p in \"${servers[@]}\"; do kill \"$p\" 2>/dev/null || true; "
      "done; }\ntrap cleanup EXIT\n"
      "wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; "
      "done; echo \"serve-sim did not listen on $1\" >&2; return 1; }\n";
  const std::string p = std::to_string(port);
  for (std::string l : b.lines) {
    for (size_t at; (at = l.find("8089")) != std::string::npos;) l.replace(at, 4, p);
    if (l.find("serve-sim") != std::string::npos) {
      if (const auto hash = l.find(" #"); hash != std::string::npos) l = l.substr(0, hash);
      while (!l.empty() && (l.back() == ' ' || l.back() == '&')) l.pop_back();
      const bool has_port = l.find("--port") != std::string::npos;
      s += l + (has_port ? "" : " --port " + p) + " &\nservers+=($!)\nwait_port " + p + "\n";
      continue;
    }
    s += l + "\n";
  }
  s += "for srv in \"${servers[@]}\"; do kill -0 \"$srv\" || { echo \"serve-sim exited early\" >&2; exit 1; }; done\n";
  return s;
}

bool real_data_present() { return fs::exists(testing::data_dir() + "/fairmedagent-floor16/vignettes.json"); }

TEST(DocsSnippets, EveryCommandBlockRunsAsWritten) {
  std::vector<Block> all;
  const std::string root = NF_SOURCE_DIR;
  for (const auto& e : fs::directory_iterator(root + "/docs"))
    if (e.path().extension() == ".md") {
      auto b = blocks_of(e.path().string(), "docs/" + e.path().filename().string());
      all.insert(all.end(), b.begin(), b.end());
    }
  {
    auto b = blocks_of(root + "/README.md", "README.md");
    all.insert(all.begin(), b.begin(), b.end());
  }
  const bool data = real_data_present();
  int ran = 0, skipped_data = 0, skipped_marked = 0;
  int port = 20000 + static_cast<int>(::getpid() % 20000);
  for (const auto& b : all) {
    if (!is_command_block(b)) continue;
    const std::string where = b.file + ":" + std::to_string(b.line);
    if (b.marker.find("snippet: skip") != std::string::npos) {
      ++skipped_marked;
      continue;
    }
    const std::string text = text_of(b);
    const bool needs_data = b.marker.find("NOISEFLOOR_DATA") != std::string::npos ||
                            text.find("NOISEFLOOR_DATA") != std::string::npos ||
                            text.find("../shared/data") != std::string::npos;
    if (needs_data && !data) {
      std::printf("skip %s: needs the real data (NOISEFLOOR_DATA)\n", where.c_str());
      ++skipped_data;
      continue;
    }
    TempDir t;
    const std::string work = t / "work";
    fs::create_directories(work + "/build/release");
    fs::create_directories(t / "bin");
    fs::create_directories(t / "shared");
    fs::create_directory_symlink(root + "/examples", work + "/examples");
    fs::create_directory_symlink(root + "/data", work + "/data");
    fs::create_symlink(NF_BINARY, work + "/build/release/noisefloor");
    fs::create_symlink(NF_BINARY, t / "bin/noisefloor");
    if (data) {
      fs::create_directory_symlink(testing::data_dir(), t / "shared/data");
      testing::write_text(work + "/model_a.csv", testing::fairmedagent_model_a_csv());
    }
    testing::write_text(t / "block.sh", script_of(b, ++port));
    const std::string env = std::string("PATH=") + t.path() + "/bin:$PATH " +
                            (data ? "NOISEFLOOR_DATA=" + testing::data_dir() : std::string("-u NOISEFLOOR_DATA"));
    const std::string cmd = "cd " + work + " && env " + env + " timeout 300 bash " + t / "block.sh" + " >" +
                            t / "out.txt" + " 2>&1";
    const int st = std::system(cmd.c_str());
    ++ran;
    EXPECT_EQ(st, 0) << where << " failed; the block:\n" << text << "output:\n" << slurp(t / "out.txt");
  }
  std::printf("docs snippets: %d command blocks ran, %d marked skip, %d need the real data and were skipped\n", ran,
              skipped_marked, skipped_data);
  EXPECT_GE(ran, 6);  // the parser found the blocks (README quick start, stats, serve-sim, docs pages)
}

// The extraction rules on a fixture: command vs non-command blocks, markers, fences.
TEST(DocsSnippets, ExtractionRules) {
  TempDir t;
  testing::write_text(t / "x.md",
                      "Text\n\n    noisefloor stats wilson 1 2\n\n<!-- snippet: skip (placeholders) -->\n\n"
                      "    noisefloor audit STUDY.yaml\n\nA study:\n\n    subjects:\n      - name: a\n\n```sh\n"
                      "SIM_URL=http://x/v1 build/release/noisefloor judge s.yaml\n```\n\n- a list item\n\n"
                      "    scripts/install-deps && cmake --preset ci\n");
  const auto b = blocks_of(t / "x.md", "x.md");
  ASSERT_EQ(b.size(), 5u);
  EXPECT_TRUE(is_command_block(b[0]));
  EXPECT_EQ(b[0].line, 3);
  EXPECT_TRUE(is_command_block(b[1]));
  EXPECT_NE(b[1].marker.find("skip"), std::string::npos);
  EXPECT_FALSE(is_command_block(b[2]));  // YAML
  EXPECT_TRUE(is_command_block(b[3]));   // fenced, with an env prefix
  EXPECT_FALSE(is_command_block(b[4]));  // the build line: CI runs it itself
  const std::string s = script_of(Block{"x", 1, "", {"noisefloor serve-sim --port 8089     # comment"}}, 4242);
  EXPECT_NE(s.find("noisefloor serve-sim --port 4242 &"), std::string::npos) << s;
  EXPECT_NE(s.find("wait_port 4242"), std::string::npos) << s;
}

}  // namespace
}  // namespace nf
