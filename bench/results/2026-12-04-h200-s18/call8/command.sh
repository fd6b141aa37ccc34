# session 18 call 8 (NVIDIA H200), prepared here at e59a71b:
#   ROWS_ODD_SHAPES="65536,1001 65536,1537 32768,1999 16384,4001 8192,7001 4096,14001" \
#   ROWS_ODD_VARIANTS="d:softmax:stage=direct c4:softmax:stage=direct,chunks=4" bash bench/rows_odd_h200.sh prepare build/rocke -
DEVICE_CALL_TAIL=45 bash bench/device_call.sh \
  "rows:240:ROWS_ODD_ANY=' ' ROWS_ODD_SHAPES='65536,1001 65536,1537 32768,1999 16384,4001 8192,7001 4096,14001' bash bench/rows_odd_h200.sh run"
