"""The folds the store keeps beside each session as it appends (store/kept_folds.py): where a conversation stands (`desk_state`) and its SLA clocks (`sla`)."""
