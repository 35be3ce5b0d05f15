"""The labs' own glue: `experiments` (start, share and record runs of a workload), `knobs` (every engine
setting as a widget), `workload_editor`, `models` (one loaded model per process), `downloads` (metrics, traces,
figures), and `server_panels` (the Real-server page: start a server, load it, watch its /metrics)."""
