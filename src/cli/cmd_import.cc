// noisefloor import | export
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "data/draws_import.h"
#include "runner/import.h"
#include "store/store.h"
#include "util/exit_code.h"

namespace nf::cli {

int cmd_import(int argc, char** argv) {
  CLI::App app{"Import published data into a store so the same analyses run on it.\n\n"
               "  noisefloor import draws FILE --store S.sqlite\n"
               "FILE is CSV (header row) or JSONL with the long-format columns\n"
               "  subject,item,cluster,condition,config,replicate,outcome,value\n"
               "one row per outcome of one draw (cluster may be empty = item). Then:\n"
               "  noisefloor analyze --store S.sqlite --out DIR --vote-sizes 3,5",
               "noisefloor import"};
  std::string format, file, store_path, study_name = "imported";
  app.add_option("format", format, "what FILE holds: draws")->required()->check(CLI::IsMember({"draws"}));
  app.add_option("file", file, "the file to import (.csv or .jsonl)")->required();
  app.add_option("--store", store_path, "the SQLite store to write (created if missing)")->required();
  app.add_option("--study-name", study_name, "study name recorded in a new store (default: imported)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto rows = read_long_draws(file);
  if (!rows.ok()) return fail("import", rows.status());
  auto store = Store::open(store_path);
  if (!store.ok()) return fail("import", store.status());
  auto sum = import_long_draws(*rows, **store, study_name);
  if (!sum.ok()) return fail("import", sum.status());
  std::fprintf(stderr, "import: %lld rows -> %lld draws of %lld items into %s\n", static_cast<long long>(sum->rows),
               static_cast<long long>(sum->draws), static_cast<long long>(sum->items), store_path.c_str());
  return 0;
}

int cmd_export(int argc, char** argv) {
  CLI::App app{"Export a store's draws for pandas or R: JSONL (one draw per line, with outcomes) or CSV (one "
               "outcome per row, the long format `import draws` reads).\n\nExample:\n"
               "  noisefloor export --store runs/sample/store.sqlite --format csv --out draws.csv",
               "noisefloor export"};
  std::string store_path, format = "jsonl", out;
  app.add_option("--store", store_path, "the SQLite store")->required();
  app.add_option("--format", format, "jsonl or csv")->check(CLI::IsMember({"jsonl", "csv"}));
  app.add_option("--out", out, "output file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto store = Store::open_existing(store_path);
  if (!store.ok()) return fail("export", store.status());
  Status st = format == "csv" ? (*store)->export_csv(out) : (*store)->export_jsonl(out);
  if (!st.ok()) return fail("export", st);
  return 0;
}

}  // namespace nf::cli
