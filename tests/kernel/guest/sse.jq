# The tuner.tune event of one tuner, origin and frequency in a text/event-
# stream capture (jq -Rn -f sse.jq --argjson tuner ID --arg origin ORIGIN
# --argjson freq HZ FILE): prints the last such event, fails without one.
# The capture may end inside an event (the stream is cut by a kill): an
# event counts once the blank line that ends it arrived.

# SSE blocks ("field: value" lines, a blank line ends one) -> objects.
def sse_events:
	foreach (inputs | rtrimstr("\r")) as $l ({cur: {}, out: null};
		if $l == "" then
			{cur: {}, out: (if .cur == {} then null else .cur end)}
		elif ($l | startswith(":")) then
			.out = null
		else
			($l | index(":")) as $i
			| (if $i == null then $l else $l[:$i] end) as $k
			| (if $i == null then "" else $l[$i + 1:] | ltrimstr(" ")
			   end) as $v
			| .out = null
			| if $k == "data" and .cur.data != null
			  then .cur.data += "\n" + $v
			  else .cur[$k] = $v end
		end;
		.out // empty);

[sse_events | select(.data != null) | .data |= fromjson] as $all
| [$all[] | select(.event == "tuner.tune" and .data.type == .event
	and .id != null and .data.seq == (.id | tonumber)
	and .data.tuner == $tuner and .data.origin == $origin
	and .data.params.frequency == $freq)]
| if length > 0 then
	.[-1]
  else
	error("no tuner.tune event of tuner \($tuner) from \($origin) at " +
	      "\($freq) Hz among \($all | length) events; tuner.tune events" +
	      " seen: \([$all[] | select(.event == "tuner.tune")
		| .data | {seq, tuner, origin, params}] | tojson)")
  end
