// The `custom` filter (lm_eval/filters/custom.py). The reference's `decontaminate` placeholder is
// not registered: PyPI lm-eval 0.4.13 never imports lm_eval/filters/decontamination.py.
#include "filters/filter_util.hpp"

namespace lmeval::filters {

namespace {

// CustomFilter: filter_fn(resps, docs) over all instances; filter_fn names a registered
// FilterFunction (a YAML `!function` reference or a plain name).
class Custom : public Filter {
 public:
  explicit Custom(const FilterFunction* fn) : fn_(fn) {}
  std::vector<Json> apply(std::vector<Json> resps,
                          const std::vector<const Json*>& docs) const override {
    return (*fn_)(std::move(resps), docs);
  }

 private:
  const FilterFunction* fn_;
};

}  // namespace

void register_custom_filters(FilterRegistry& r) {
  r.add("custom", [](const Json& kwargs, const SourceLocation& where) -> std::unique_ptr<Filter> {
    // CustomFilter pops filter_fn and passes the rest to Filter.__init__, which ignores them.
    Kwargs args("custom", kwargs, where, {"filter_fn"}, /*extra_allowed=*/true);
    args.require("filter_fn");
    const Json& fn = args.get("filter_fn");
    std::string name, family;
    if (fn.is_object() && fn.contains("!function") && fn["!function"].is_string()) {
      name = fn["!function"].get<std::string>();
      if (fn.contains("python_module") && python_filter_factory())  // the reference's Python
        return python_filter_factory()(fn, Json::object(), where, /*is_class=*/false);
      if (fn.contains("python_module"))  // no C++ port of this exact module source (issue 15)
        args.fail("filter_fn", "`!function " + name +
                                   "` needs Python: lm-eval has no C++ port of " +
                                   fn["python_module"].get<std::string>() +
                                   ", and running Python task code is not supported yet");
      if (fn.contains("dir") && fn["dir"].is_string()) family = fn["dir"].get<std::string>();
    } else if (fn.is_string()) {
      name = fn.get<std::string>();
    } else {
      args.fail("filter_fn", "filter_fn must be a function reference (!function module.name)");
    }
    const FilterFunction* f = FilterRegistry::instance().find_function(name, family);
    if (!f) args.fail("filter_fn", "filter function '" + name + "' has no C++ implementation");
    return std::make_unique<Custom>(f);
  });
}

}  // namespace lmeval::filters
