"""What the model is given besides the sampling parameters: the chat prompt rendered from the
template (chat_prompt.py), the template's thinking switch (thinking_switch.py) and the grammar that
constrains the answer (structured_output_fields.py).

May import: core/."""
