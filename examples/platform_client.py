"""Play 1,000 hands against A^R on a cfrkit platform server (OpenHoldem's Figure 2, in 20 lines)."""
import json, socket, sys

def act(state):
    """Raise the pot with a pair or an ace, otherwise check or call."""
    legal, ranks = state["legal"], [card[0] for card in state["hole"]]
    if (ranks[0] == ranks[1] or "A" in ranks) and legal["raise"]:
        low, high = legal["raise"]
        return {"type": "action", "action": "raise", "amount": min(high, max(low, max(state["spent"]) + state["pot"] + legal["call"]))}
    return {"type": "action", "action": "call"}

host, port = (sys.argv[1], int(sys.argv[2])) if len(sys.argv) > 2 else ("127.0.0.1", 1080)
client = socket.create_connection((host, port))
stream = client.makefile("rw")
stream.write(json.dumps({"type": "play", "opponent": "ar", "hands": 1000}) + "\n"); stream.flush()
for line in stream:
    msg = json.loads(line)
    if msg["type"] == "state" and msg["to_act"]:
        stream.write(json.dumps(act(msg)) + "\n"); stream.flush()
    elif msg["type"] == "match_end":
        print(f"match {msg['match']}: {msg['hands']} hands, chips won {msg['totals'][0]:+g}"); break
client.close()
