"""Documents: uploads and their versions, the background ingestion jobs that read (OCR included,
within its budget) and embed them, and reading a document's passages back."""
