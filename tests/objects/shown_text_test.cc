#include "objects/shown_text.h"

#include <catch2/catch.hpp>
#include <string>

using namespace kistore;

TEST_CASE("cut_text keeps short text and cuts long text on a character boundary") {
  CHECK(cut_text("short") == "short");
  CHECK(cut_text(std::string(200, 'a')) == std::string(200, 'a'));
  CHECK(cut_text(std::string(201, 'a')) == std::string(200, 'a') + "…");
  // é is two bytes: 3 characters kept, never half of one.
  CHECK(cut_text("ééééé", 3) == "ééé…");
  CHECK(cut_text("ab", 0) == "…");
  CHECK(cut_text(std::string(15u << 20, 'x')).size() == 200 + kCutMark.size());
}

TEST_CASE("cut_json cuts strings and bounds the whole value") {
  Json v = Json::object();
  v.set("name", std::string(1000, 'n'));
  v.set(std::string(300, 'k'), 1);
  Json cut = cut_json(v);
  CHECK(cut.find("name")->as_string() == std::string(200, 'n') + "…");
  CHECK(cut.find(std::string(200, 'k') + "…"));
  CHECK(json_needs_cut(v));
  Json small = Json::object();
  small.set("a", "b");
  CHECK(cut_json(small) == small);
  CHECK_FALSE(json_needs_cut(small));

  // A million short elements: cut to the budget, with a marker.
  Json big = Json::array();
  for (int i = 0; i < 1000000; ++i) big.push_back(Json(i));
  std::string text = canonical(cut_json(big));
  CHECK(text.size() < 8192);
  CHECK(text.find("\"…\"") != std::string::npos);

  // Two long names of one prefix: names stay unique.
  Json twins = Json::object();
  twins.set(std::string(300, 'a') + "1", 1);
  twins.set(std::string(300, 'a') + "2", 2);
  Json t = cut_json(twins);
  CHECK(t.as_object().size() == 2);
  CHECK(t.find("…"));
  CHECK_NOTHROW(canonical(t));
}
