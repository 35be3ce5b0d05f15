"""Generate text with the real engine and look at every step it took."""
import pandas as pd
import streamlit as st

from engine import LLM, ConfigError, SamplingParams, load_model


@st.cache_resource(show_spinner="Loading the model…")
def get_model(name: str):
    return load_model(name)


st.title("Generate")
model_name = st.selectbox("Model", ["tiny", "smollm2", "random-small"])
prompts = st.text_area("Prompts, one per line", "Once upon a time\nIt was a bright cold day").splitlines()
cols = st.columns(3)
batcher = cols[0].radio("Batcher", ["continuous", "static"])
max_num_seqs = cols[1].number_input("max_num_seqs", 1, 64, 4)
max_tokens = cols[2].number_input("max_tokens", 1, 512, 40)

if st.button("Generate", type="primary"):
    try:
        llm = LLM(get_model(model_name), batcher=batcher, max_num_seqs=int(max_num_seqs))
        snaps = []
        outputs = llm.generate([p for p in prompts if p.strip()],
                               SamplingParams(temperature=0.8, top_k=40, max_tokens=int(max_tokens), seed=0),
                               on_step=snaps.append)
    except ConfigError as e:
        st.error(str(e))
    else:
        for out in outputs:
            st.markdown(f"**{out.request_id}** ({out.finish_reason})")
            st.code(out.error or out.text, wrap_lines=True)
        st.dataframe(pd.DataFrame([{
            "step": s.step, "ms": round(s.step_time_s * 1000, 2), "prefill": s.num_prefill_tokens,
            "decode": s.num_decode_tokens, "slots": " ".join(x or "·" for x in s.slots),
            "waiting": len(s.waiting), "free blocks": s.num_free_blocks} for s in snaps]), hide_index=True)
