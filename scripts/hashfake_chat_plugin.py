"""`hashfake_chat`: the reference side of lm-eval's `--model dummy --model_args tokenizer=DIR`.

hashfake's answers (../shared/goldens/tools/hashfake_plugin.py, imported as `hashfake_base`) with
the chat template of a local tokenizer folder, which the reference's own model classes give a run:
`chat_template` is TemplateLM.chat_template (what results record), `apply_chat_template` is
HFLM.apply_chat_template (what build_all_requests renders with) and `tokenizer_name` HFLM's.
Needs transformers (and, for HFLM's module, torch) in the reference's environment.
"""
from hashfake_base import HashFakeLM
from lm_eval.api.model import TemplateLM
from lm_eval.api.registry import register_model


@register_model("hashfake_chat")
class HashFakeChatLM(HashFakeLM):
    def __init__(self, tokenizer=None, **kwargs) -> None:
        super().__init__()
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer)
        self.chat_template_args = {}

    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None):
        from lm_eval.utils import simple_parse_args_string

        return cls(**simple_parse_args_string(arg_string))

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls(**arg_dict)

    chat_template = TemplateLM.chat_template

    @property
    def tokenizer_name(self) -> str:
        return self.tokenizer.name_or_path.replace("/", "__")

    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        from lm_eval.models.huggingface import HFLM

        return HFLM.apply_chat_template(self, chat_history, add_generation_prompt)
