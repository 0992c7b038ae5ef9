// Complex evaluation of expression trees; see evaluate.hpp.
#include "lmeval/tasks/functions/math/evaluate.hpp"

#include <cmath>
#include <functional>
#include <numeric>

namespace lmeval::tasks::math {

namespace {

uint64_t mix(uint64_t h) {  // splitmix64 finaliser
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

double unit_random(const std::string& name, int point, int salt) {
  uint64_t h =
      std::hash<std::string>{}(name) ^ (static_cast<uint64_t>(point) * 0x100000001b3ULL) ^ salt;
  return static_cast<double>(mix(h) >> 11) / 9007199254740992.0;  // [0, 1)
}

// Random points are real (math-verify's symbols are real unless the answer looks complex),
// of both signs and away from 0 and +-1, where special cases live.
Complex symbol_value(const std::string& name, int point) {
  std::string_view suffix(kComplexSuffix);
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return {2.4 * unit_random(name, point, 5) - 1.2, 2.4 * unit_random(name, point, 6) - 1.2};
  double u = unit_random(name, point, 1);
  double mag = 0.3 + 2.4 * u;
  if (std::fabs(mag - 1.0) < 0.05) mag += 0.1;
  bool negative = unit_random(name, point, 2) < (point % 3 == 1 ? 0.6 : 0.3);
  return {negative ? -mag : mag, 0.0};
}

std::optional<Complex> scalar(const std::optional<Value>& v) {
  if (!v || !v->is_scalar()) return std::nullopt;
  return v->v[0];
}

Value make_scalar(Complex c) { return Value{0, 0, {c}}; }

std::optional<double> real_of(const Complex& c) {
  if (std::fabs(c.imag()) > 1e-12 * std::max(1.0, std::fabs(c.real()))) return std::nullopt;
  return c.real();
}

std::optional<Value> mat_mul(const Value& a, const Value& b) {
  if (a.is_scalar() && b.is_scalar()) return make_scalar(a.v[0] * b.v[0]);
  if (a.is_scalar() || b.is_scalar()) {
    const Value& m = a.is_scalar() ? b : a;
    Complex s = a.is_scalar() ? a.v[0] : b.v[0];
    Value r = m;
    for (auto& x : r.v) x *= s;
    return r;
  }
  if (a.cols != b.rows) return std::nullopt;
  Value r{a.rows, b.cols, std::vector<Complex>(a.rows * b.cols)};
  for (size_t i = 0; i < a.rows; ++i)
    for (size_t j = 0; j < b.cols; ++j)
      for (size_t k = 0; k < a.cols; ++k)
        r.v[i * b.cols + j] += a.v[i * a.cols + k] * b.v[k * b.cols + j];
  return r;
}

double lgamma_factorial(double x) { return std::tgamma(x + 1.0); }

std::optional<Complex> apply_function(const std::string& f, const std::vector<Complex>& a) {
  const Complex& x = a[0];
  if (f == "sin") return std::sin(x);
  if (f == "cos") return std::cos(x);
  if (f == "tan") return std::tan(x);
  if (f == "sec") return 1.0 / std::cos(x);
  if (f == "csc") return 1.0 / std::sin(x);
  if (f == "cot") return 1.0 / std::tan(x);
  if (f == "arcsin") return std::asin(x);
  if (f == "arccos") return std::acos(x);
  if (f == "arctan") return std::atan(x);
  if (f == "arcsec") return std::acos(1.0 / x);
  if (f == "arccsc") return std::asin(1.0 / x);
  if (f == "arccot") return std::atan(1.0 / x);
  if (f == "sinh") return std::sinh(x);
  if (f == "cosh") return std::cosh(x);
  if (f == "tanh") return std::tanh(x);
  if (f == "sech") return 1.0 / std::cosh(x);
  if (f == "csch") return 1.0 / std::sinh(x);
  if (f == "coth") return 1.0 / std::tanh(x);
  if (f == "arsinh") return std::asinh(x);
  if (f == "arcosh") return std::acosh(x);
  if (f == "artanh") return std::atanh(x);
  if (f == "log") return std::log(x) / std::log(a[1]);
  if (f == "abs") return Complex(std::abs(x), 0.0);
  auto r = real_of(x);
  if (f == "floor" && r) return Complex(std::floor(*r), 0.0);
  if (f == "ceiling" && r) return Complex(std::ceil(*r), 0.0);
  if (f == "factorial" && r) return Complex(lgamma_factorial(*r), 0.0);
  if (f == "binom" && r) {
    auto k = real_of(a[1]);
    if (!k) return std::nullopt;
    return Complex(std::tgamma(*r + 1) / (std::tgamma(*k + 1) * std::tgamma(*r - *k + 1)), 0.0);
  }
  if (f == "max" || f == "min") {
    double best = f == "max" ? -INFINITY : INFINITY;
    for (const auto& c : a) {
      auto v = real_of(c);
      if (!v) return std::nullopt;
      best = f == "max" ? std::max(best, *v) : std::min(best, *v);
    }
    return Complex(best, 0.0);
  }
  if (f == "gcd" || f == "lcm") {
    long long acc = f == "gcd" ? 0 : 1;
    for (const auto& c : a) {
      auto v = real_of(c);
      if (!v || std::fabs(*v - std::round(*v)) > 1e-9 || std::fabs(*v) > 1e15) return std::nullopt;
      long long n = std::llabs(static_cast<long long>(std::llround(*v)));
      acc = f == "gcd" ? std::gcd(acc, n) : std::lcm(acc, n);
    }
    return Complex(static_cast<double>(acc), 0.0);
  }
  return std::nullopt;
}

using Binding = std::map<std::string, Complex>;

std::optional<Value> eval(const Node& n, int point, const Binding* bound = nullptr) {
  switch (n.kind) {
    case Kind::Integer:
    case Kind::Float:
      return make_scalar(Complex(std::strtod(n.text.c_str(), nullptr), 0.0));
    case Kind::Symbol:
      if (bound) {
        auto it = bound->find(n.text);
        if (it == bound->end()) return std::nullopt;
        return make_scalar(it->second);
      }
      if (point == 0) return std::nullopt;
      return make_scalar(symbol_value(n.text, point));
    case Kind::Constant:
      if (n.text == "pi") return make_scalar(M_PI);
      if (n.text == "e") return make_scalar(M_E);
      if (n.text == "i") return make_scalar(Complex(0.0, 1.0));
      return make_scalar(INFINITY);
    case Kind::Neg: {
      auto v = eval(*n.kids[0], point, bound);
      if (!v) return std::nullopt;
      for (auto& x : v->v) x = -x;
      return v;
    }
    case Kind::Percent: {
      auto v = scalar(eval(*n.kids[0], point, bound));
      if (!v) return std::nullopt;
      return make_scalar(*v / 100.0);
    }
    case Kind::Add: {
      std::optional<Value> acc;
      for (const auto& k : n.kids) {
        auto v = eval(*k, point, bound);
        if (!v) return std::nullopt;
        if (!acc) {
          acc = v;
          continue;
        }
        if (acc->rows != v->rows || acc->cols != v->cols) return std::nullopt;
        for (size_t i = 0; i < v->v.size(); ++i) acc->v[i] += v->v[i];
      }
      return acc;
    }
    case Kind::Mul: {
      std::optional<Value> acc;
      for (const auto& k : n.kids) {
        auto v = eval(*k, point, bound);
        if (!v) return std::nullopt;
        acc = acc ? mat_mul(*acc, *v) : v;
        if (!acc) return std::nullopt;
      }
      return acc;
    }
    case Kind::Pow: {
      auto b = eval(*n.kids[0], point, bound);
      auto e = scalar(eval(*n.kids[1], point, bound));
      if (!b || !e) return std::nullopt;
      if (!b->is_scalar()) {
        auto k = real_of(*e);
        if (!k || *k < 1 || *k != std::round(*k) || b->rows != b->cols || *k > 64)
          return std::nullopt;
        Value r = *b;
        for (int i = 1; i < static_cast<int>(*k); ++i) {
          auto m = mat_mul(r, *b);
          if (!m) return std::nullopt;
          r = *m;
        }
        return r;
      }
      Complex base = b->v[0];
      if (base == Complex(0.0, 0.0) && e->real() < 0) return std::nullopt;
      // Integer powers exactly (std::pow on complex goes through log/exp).
      if (e->imag() == 0 && e->real() == std::round(e->real()) && std::fabs(e->real()) <= 64) {
        Complex r = 1.0;
        int k = static_cast<int>(std::fabs(e->real()));
        for (int i = 0; i < k; ++i) r *= base;
        return make_scalar(e->real() < 0 ? 1.0 / r : r);
      }
      if (base.imag() == 0 && base.real() > 0 && e->imag() == 0)
        return make_scalar(Complex(std::pow(base.real(), e->real()), 0.0));
      return make_scalar(std::pow(base, *e));
    }
    case Kind::Func: {
      std::vector<Complex> args;
      for (const auto& k : n.kids) {
        auto v = scalar(eval(*k, point, bound));
        if (!v) return std::nullopt;
        args.push_back(*v);
      }
      if (args.empty()) return std::nullopt;
      if (!n.text.empty() && n.text[0] == '@') {  // an undefined function: a fixed smooth one
        Complex acc = 0.0;
        for (size_t i = 0; i < args.size(); ++i) {
          double k1 = 0.5 + unit_random(n.text, static_cast<int>(i), 3),
                 k2 = unit_random(n.text, static_cast<int>(i), 4);
          acc += std::sin(k1 * args[i] + k2) * (1.0 + static_cast<double>(i));
        }
        return make_scalar(acc);
      }
      auto r = apply_function(n.text, args);
      if (!r) return std::nullopt;
      return make_scalar(*r);
    }
    case Kind::Matrix: {
      Value m{n.rows, n.cols, {}};
      for (const auto& k : n.kids) {
        auto v = scalar(eval(*k, point, bound));
        if (!v) return std::nullopt;
        m.v.push_back(*v);
      }
      return m;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<Value> evaluate_at(const Node& n, const std::map<std::string, Complex>& symbols) {
  auto v = eval(n, 0, &symbols);
  if (!v) return std::nullopt;
  for (const auto& x : v->v)
    if (std::isnan(x.real()) || std::isnan(x.imag())) return std::nullopt;
  return v;
}

std::optional<Value> evaluate(const Node& n, int point) {
  auto v = eval(n, point);
  if (!v) return std::nullopt;
  for (const auto& x : v->v)
    if (std::isnan(x.real()) || std::isnan(x.imag())) return std::nullopt;
  return v;
}

std::optional<Complex> evaluate_constant(const Node& n) { return scalar(evaluate(n, 0)); }

void free_symbols(const Node& n, std::set<std::string>& out) {
  if (n.kind == Kind::Symbol) out.insert(n.text);
  for (const auto& k : n.kids) free_symbols(*k, out);
}

}  // namespace lmeval::tasks::math
