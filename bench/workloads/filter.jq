# filter.jq — the jq workload of bench/heap_overhead.sh: select, reshape,
# group and deduplicate every record of data.json (bench/workloads/gen.py).
map(select(.active)
    | {id, name, city: .address.city, total: (.scores | add), tags: (.tags | join(","))})
| group_by(.total % 10)
| map({k: (.[0].total % 10), n: length, t: (map(.tags) | unique | length)})
