// ObjectBuilder (store/ingest/harness_import.h): an object built one member at
// a time from an input's names is Json::set's object, in linear time.
#include "store/ingest/harness_import.h"

#include <catch2/catch.hpp>

#include <string>

namespace kistore {
namespace {

TEST_CASE("object builder: the object Json::set makes, below and past its index", "[ingest]") {
  for (int n : {0, 1, 15, 16, 17, 40, 5000}) {
    INFO(n << " names");
    ObjectBuilder built;
    Json expected = Json::object();
    for (int i = 0; i < n; ++i) {
      const std::string name = "m" + std::to_string(i % 7 == 3 ? i / 2 : i);  // some names again: replaced
      CHECK(built.contains(name) == (expected.find(name) != nullptr));
      built.set(name, Json(static_cast<double>(i)));
      expected.set(name, Json(static_cast<double>(i)));
      CHECK(built.contains(name));
    }
    CHECK_FALSE(built.contains("absent"));
    const Json made = built.take();
    REQUIRE(made.is_object());
    CHECK(made.as_object() == expected.as_object());  // the same members, in the same order
    CHECK(built.take().as_object().empty());          // taken: empty again
  }
}

}  // namespace
}  // namespace kistore
