// format_number: JavaScript's String(x), with nan/inf/-inf.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "vm/vm.h"

using vm::format_number;

TEST_CASE("format_number: integers print without a fraction or exponent") {
  CHECK(format_number(0) == "0");
  CHECK(format_number(-0.0) == "0");
  CHECK(format_number(4095) == "4095");
  CHECK(format_number(100) == "100");
  CHECK(format_number(-7) == "-7");
  CHECK(format_number(1e20) == "100000000000000000000");
  CHECK(format_number(123456789012345680000.0) == "123456789012345680000");
  CHECK(format_number(9007199254740992.0) == "9007199254740992");
  // The last integers below 2^53, printed from their integer value.
  CHECK(format_number(9007199254740991.0) == "9007199254740991");
  CHECK(format_number(-9007199254740991.0) == "-9007199254740991");
  CHECK(format_number(1e15) == "1000000000000000");
  CHECK(format_number(-2147483648.0) == "-2147483648");
}

TEST_CASE("format_number: shortest round-trip decimals") {
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(1.0 / 3) == "0.3333333333333333");
  CHECK(format_number(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_number(2.5) == "2.5");
  CHECK(format_number(-2.5) == "-2.5");
  CHECK(format_number(123.456) == "123.456");
  CHECK(format_number(0.000001) == "0.000001");
  CHECK(format_number(0.0000015) == "0.0000015");
}

TEST_CASE("format_number: exponent form from 1e21 up and below 1e-6") {
  CHECK(format_number(1e21) == "1e+21");
  CHECK(format_number(1e-7) == "1e-7");
  CHECK(format_number(-1e-7) == "-1e-7");
  CHECK(format_number(1.5e-7) == "1.5e-7");
  CHECK(format_number(123e-20) == "1.23e-18");
  CHECK(format_number(1e300) == "1e+300");
  CHECK(format_number(1.5e300) == "1.5e+300");
  CHECK(format_number(5e-324) == "5e-324");
  CHECK(format_number(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
}

TEST_CASE("format_number: NaN and infinities") {
  CHECK(format_number(std::nan("")) == "nan");
  CHECK(format_number(-std::nan("")) == "nan");
  CHECK(format_number(INFINITY) == "inf");
  CHECK(format_number(-INFINITY) == "-inf");
}

TEST_CASE("type_name and values_equal on immediates") {
  using gc::Value;
  CHECK(std::string(vm::type_name(Value::nil())) == "nil");
  CHECK(std::string(vm::type_name(Value::boolean(true))) == "bool");
  CHECK(std::string(vm::type_name(Value::num(1))) == "num");
  CHECK(vm::values_equal(Value::num(0.0), Value::num(-0.0)));
  CHECK_FALSE(vm::values_equal(Value::num(NAN), Value::num(NAN)));
  CHECK_FALSE(vm::values_equal(Value::num(1), Value::boolean(true)));
  CHECK(vm::values_equal(Value::nil(), Value::nil()));
}
