// Transformation filters (lm_eval/filters/transformation.py): lowercase, uppercase, map,
// format_span.
#include "filters/filter_util.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::filters {

namespace {

// LowercaseFilter / UppercaseFilter.
class ChangeCase : public Filter {
 public:
  explicit ChangeCase(bool upper) : upper_(upper) {}
  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    const char* name = upper_ ? "uppercase" : "lowercase";
    for (Json& inst : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(inst, name)) {
        const std::string& s = py_str(resp, upper_ ? "upper" : "lower", name);
        filtered.push_back(upper_ ? unicode::py_upper(s) : unicode::py_lower(s));
      }
      inst = std::move(filtered);
    }
    return resps;
  }

 private:
  bool upper_;
};

// MapFilter: mapping_dict.get(resp, default_value). JSON object keys are strings, so only string
// responses can hit; other hashable responses get the default.
class Map : public Filter {
 public:
  Map(Json mapping, Json default_value)
      : mapping_(std::move(mapping)), default_(std::move(default_value)) {}
  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    for (Json& inst : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(inst, "map")) {
        if (resp.is_object()) throw RuntimeError("filter 'map': unhashable type: 'dict'");
        if (resp.is_string() && mapping_.contains(resp.get_ref<const std::string&>()))
          filtered.push_back(mapping_[resp.get_ref<const std::string&>()]);
        else
          filtered.push_back(default_);
      }
      inst = std::move(filtered);
    }
    return resps;
  }

 private:
  Json mapping_;
  Json default_;
};

// SPANFilter: normalises NER label names and rewrites "LABEL: a, b" lists as "label: a $ ...".
class FormatSpan : public Filter {
 public:
  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    for (Json& inst : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(inst, "format_span"))
        filtered.push_back(format_named_entities(
            format_ner_text(unicode::py_lower(py_str(resp, "lower", "format_span")))));
      inst = std::move(filtered);
    }
    return resps;
  }

 private:
  static std::string replace_all(const std::string& s, std::string_view from, std::string_view to) {
    std::string out;
    size_t pos = 0, hit;
    while ((hit = s.find(from, pos)) != std::string::npos) {
      out.append(s, pos, hit - pos);
      out += to;
      pos = hit + from.size();
    }
    out.append(s, pos);
    return out;
  }

  static std::string format_ner_text(std::string text) {
    static const std::pair<const char*, const char*> kLabels[] = {
        {"person", "PER"},  {"location", "LOC"},  {"organization", "ORG"}, {"counties", "LOC"},
        {"places", "LOC"},  {"people", "PER"},    {"persons", "PER"},      {"company", "ORG"},
        {"country", "LOC"}, {"continent", "LOC"}, {"time", "DATE"},        {"date", "DATE"},
        {"per", "PER"},     {"loc", "LOC"},       {"org", "ORG"}};
    text = unicode::py_lower(text);
    for (const auto& [key, value] : kLabels)
      text = PyRegex::compile("\\b" + py_re_escape(key) + "\\s*:")
                 ->sub(std::string(value) + ":", text);
    text = replace_all(text, "$$", "$");
    size_t end = text.find_last_not_of('$');
    return end == std::string::npos ? std::string() : text.substr(0, end + 1);
  }

  static std::string format_named_entities(std::string text) {
    static const auto pattern = PyRegex::compile(R"(\b(PER|LOC|ORG|DATE):\s*([^$]+))");
    text = std::string(unicode::py_strip(replace_all(text, "\n", "$")));
    std::string out;
    for (const Json& m : pattern->findall(text)) {
      std::string label = unicode::py_lower(m[0].get<std::string>());
      const std::string values = m[1].get<std::string>();
      size_t start = 0;
      while (true) {
        size_t comma = values.find(',', start);
        std::string entity(unicode::py_strip(std::string_view(values).substr(
            start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (unicode::py_lower(entity) != "none")
          out += (out.empty() ? "" : " $ ") + label + ": " + entity;
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    return out;
  }
};

}  // namespace

void register_transformation_filters(FilterRegistry& r) {
  r.add("lowercase", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("lowercase", kwargs, where, {});
    return std::make_unique<ChangeCase>(false);
  });
  r.add("uppercase", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("uppercase", kwargs, where, {});
    return std::make_unique<ChangeCase>(true);
  });
  r.add("map", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("map", kwargs, where, {"mapping_dict", "default_value"});
    Json mapping = args.value("mapping_dict", nullptr);
    if (mapping.is_null()) mapping = Json::object();
    if (!mapping.is_object())
      args.fail("mapping_dict", "Provided mapping_dict is not a dictionary", "a mapping");
    return std::make_unique<Map>(std::move(mapping), args.value("default_value", nullptr));
  });
  r.add("format_span", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("format_span", kwargs, where, {});
    return std::make_unique<FormatSpan>();
  });
}

}  // namespace lmeval::filters
