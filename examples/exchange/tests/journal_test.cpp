// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "journal.hpp"

using namespace exchange;

namespace {

// A file of its own per test, removed at the end.
struct temp_file {
  std::filesystem::path path;
  temp_file() {
    path = std::filesystem::temp_directory_path()
           / ("exchange-journal-" + std::to_string(std::random_device{}())
              + ".jsonl");
  }
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

} // namespace

TEST_CASE("a journal's \\u escapes read back as UTF-8, surrogate pairs "
          "included", "[exchange][journal]") {
  temp_file f;
  // As another program (Python's json.dumps) writes it: every non-ASCII
  // character escaped.
  std::ofstream{f.path}
    << R"({"type":"order","symbol":"\u00c9TAT","seq":1,"kind":"D",)"
    << R"("session":0,"cl_ord_id":"c1","orig_cl_ord_id":"","account":"A",)"
    << R"("side":"1","price":10.5,"qty":3,"ord_type":"2","tif":"0","risk":""})"
    << '\n'
    << R"({"type":"report","symbol":"\u00c9TAT","seq":1,"symbol_seq":1,)"
    << R"("kind":"8","session":0,"text":"r\u00e9f\u00e9rence \ud83d\udcc8"})"
    << '\n';
  journal_contents c;
  std::string error;
  REQUIRE(read_journal(f.path.string(), c, error));
  REQUIRE(c.orders.size() == 1);
  REQUIRE(c.reports.size() == 1);
  CHECK(c.orders[0].request.symbol == "\xc3\x89TAT");
  CHECK(c.orders[0].request.price == 10.5);
  CHECK(c.orders[0].request.qty == 3);
  CHECK(c.reports[0].report.symbol == "\xc3\x89TAT");
  CHECK(c.reports[0].report.text == "r\xc3\xa9" "f\xc3\xa9rence \xf0\x9f\x93\x88");
}

TEST_CASE("a journal written with a non-ASCII symbol and text reads back "
          "unchanged", "[exchange][journal]") {
  temp_file f;
  journal_writer w;
  std::string error;
  REQUIRE(w.open(f.path.string(), error));
  journal_order o;
  o.seq = 7;
  o.request.symbol = "\xe6\x9d\xb1\xe4\xba\xac"; // 東京
  o.request.cl_ord_id = "quote\"back\\slash\ttab";
  o.request.price = 101.25;
  o.request.qty = 40;
  w.order(o);
  exec_report r;
  r.symbol = o.request.symbol;
  r.symbol_seq = 3;
  r.kind = report_kind::rejected;
  r.text = "Pr\xc3\xbc" "fung fehlgeschlagen";
  w.report(7, r);
  REQUIRE(w.close());
  journal_contents c;
  REQUIRE(read_journal(f.path.string(), c, error));
  REQUIRE(c.orders.size() == 1);
  REQUIRE(c.reports.size() == 1);
  CHECK(c.orders[0].seq == 7);
  CHECK(c.orders[0].request.symbol == o.request.symbol);
  CHECK(c.orders[0].request.cl_ord_id == o.request.cl_ord_id);
  CHECK(c.orders[0].request.price == 101.25);
  CHECK(c.reports[0].report.symbol_seq == 3);
  CHECK(c.reports[0].report.kind == report_kind::rejected);
  CHECK(c.reports[0].report.text == r.text);
}

TEST_CASE("a journal line that is not a JSON object is named with its line",
          "[exchange][journal]") {
  temp_file f;
  std::ofstream{f.path} << R"({"type":"order","seq":1})" << "\n{\"type\":\n";
  journal_contents c;
  std::string error;
  CHECK_FALSE(read_journal(f.path.string(), c, error));
  CHECK(error == f.path.string() + ":2: not a flat JSON object");
}
