# Checks of peers.test on loom-bench-decode's JSON.
import json
import sys

j = json.load(open(sys.argv[1]))
m = j['models'][0]
errors = m['agreement_max_abs']
print('agreement below 1e-4:',
      sorted(errors) == ['loom-ort', 'loom-torch', 'ort-torch'] and
      max(errors.values()) < 1e-4)
for r in j['rows']:
    keys = ['loom_ms_per_token', 'ort_ms_per_token', 'torch_ms_per_token']
    if r['context'] <= r['prompt_bound']:
        keys += ['loom_ttft_ms', 'ort_ttft_ms', 'torch_ttft_ms']
    print(r['context'], 'measured:', all(r[k] is not None and r[k] > 0 for k in keys))
    if r['context'] > r['prompt_bound']:
        print(r['context'], 'ttft:', r['loom_ttft_ms'], r['ort_ttft_ms'], r['torch_ttft_ms'])
