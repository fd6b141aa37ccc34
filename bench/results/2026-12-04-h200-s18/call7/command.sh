# session 18 call 7 (NVIDIA H200), prepared here at cffb320, OLD the build of f94b6ff:
#   ROWS_ODD_SHAPES="16384,3501 16384,4001 8192,7001 4096,14001 2048,16001 65536,1001" \
#     bash bench/rows_odd_h200.sh prepare build/rocke OLD/build/rocke
DEVICE_CALL_TAIL=60 bash bench/device_call.sh \
  "rows:300:ROWS_ODD_SHAPES='16384,3501 16384,4001 8192,7001 4096,14001 2048,16001 65536,1001' bash bench/rows_odd_h200.sh run"
