// Registration of the built-in `!function` implementations under the reference's YAML names.
#include <mutex>

#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/python_functions.hpp"

namespace lmeval {

void register_task_functions_classic(FunctionRegistry& r);
void register_task_functions_leaderboard(FunctionRegistry& r);
void register_task_functions_hendrycks_math(FunctionRegistry& r);
void register_task_functions_mmlu_pro_cot(FunctionRegistry& r);
void register_task_functions_gpqa(FunctionRegistry& r);
void register_task_functions_global_mmlu(FunctionRegistry& r);
void register_task_functions_llama3(FunctionRegistry& r);
void register_task_functions_super_glue(FunctionRegistry& r);
void register_task_functions_glue(FunctionRegistry& r);
void register_task_functions_race(FunctionRegistry& r);
void register_task_functions_xcopa(FunctionRegistry& r);
void register_task_functions_xwinograd(FunctionRegistry& r);
void register_task_functions_minerva_math(FunctionRegistry& r);
void register_task_functions_agieval(FunctionRegistry& r);
void register_task_functions_drop(FunctionRegistry& r);
void register_task_functions_humaneval(FunctionRegistry& r);
void register_task_functions_mbpp(FunctionRegistry& r);
void register_task_functions_xquad(FunctionRegistry& r);
void register_task_functions_norquad(FunctionRegistry& r);
void register_task_functions_coqa(FunctionRegistry& r);
void register_task_functions_catalan_bench(FunctionRegistry& r);
void register_task_functions_spanish_bench(FunctionRegistry& r);
void register_task_functions_galician_bench(FunctionRegistry& r);
void register_task_functions_iberian_rouge(FunctionRegistry& r);

void register_builtin_task_functions() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& r = FunctionRegistry::instance();
    register_task_functions_classic(r);
    register_task_functions_leaderboard(r);
    register_task_functions_hendrycks_math(r);
    register_task_functions_mmlu_pro_cot(r);
    register_task_functions_gpqa(r);
    register_task_functions_global_mmlu(r);
    register_task_functions_llama3(r);
    register_task_functions_super_glue(r);
    register_task_functions_glue(r);
    register_task_functions_race(r);
    register_task_functions_xcopa(r);
    register_task_functions_xwinograd(r);
    register_task_functions_minerva_math(r);
    register_task_functions_agieval(r);
    register_task_functions_drop(r);
    register_task_functions_humaneval(r);
    register_task_functions_mbpp(r);
    register_task_functions_xquad(r);
    register_task_functions_norquad(r);
    register_task_functions_coqa(r);
    register_task_functions_catalan_bench(r);
    register_task_functions_spanish_bench(r);
    register_task_functions_galician_bench(r);
    register_task_functions_iberian_rouge(r);
    install_python_filters();
  });
}

}  // namespace lmeval
