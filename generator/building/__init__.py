"""One release from the CSVs of data/: loaded (load/), scored (scoring/), rendered (render/), validated,
written with its twins (output/, writer.py); and the documents rewritten at every switch of the live
release (switch/)."""
