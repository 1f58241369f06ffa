//! The estimators' side of the `estimate-web` bundle (wasm32 only): an island hands its
//! exports the query of its inputs and shows the HTML they return. The bundle is
//! fetched on the first call (through `lazy-web`, once per page), and an answer that
//! arrives after a later call was made is dropped, so the page shows the answer to the
//! reader's last change.

use leptos::prelude::*;

/// One island's calls into the bundle.
#[derive(Clone, Copy)]
pub struct Answers {
    /// The bundle's glue and wasm URLs.
    urls: StoredValue<(String, String)>,
    /// The id of the last call: answers to earlier ones are stale.
    latest: StoredValue<u32>,
}

impl Answers {
    pub fn new(js: String, wasm: String) -> Self {
        Self {
            urls: StoredValue::new((js, wasm)),
            latest: StoredValue::new(0),
        }
    }

    /// Calls each of `exports` with `query` and hands `show` their texts, or a Spanish
    /// reason why there are none, unless a later call was made in the meantime.
    pub fn ask(
        self,
        exports: &'static [&'static str],
        query: String,
        show: impl FnOnce(Result<Vec<String>, String>) + 'static,
    ) {
        let id = self.drop_pending();
        let (js, wasm) = self.urls.get_value();
        let latest = self.latest;
        leptos::task::spawn_local(async move {
            let result = match lazy_web::load("del estimador", &js, &wasm).await {
                Ok(module) => {
                    let mut texts = Vec::with_capacity(exports.len());
                    for export in exports {
                        let text = lazy_web::call(&module, export, &[&query.as_str().into()])
                            .await
                            .ok()
                            .and_then(|v| v.as_string());
                        texts.push(text);
                    }
                    texts
                        .into_iter()
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            "El estimador no pudo calcular esta configuración.".to_owned()
                        })
                }
                Err(e) => Err(e),
            };
            if latest.get_value() == id {
                show(result);
            }
        });
    }

    /// Calls `export` with `query` once, apart from the answers (a later answer does
    /// not make it stale): the text, or a Spanish reason.
    pub async fn call(self, export: &str, query: &str) -> Result<String, String> {
        let (js, wasm) = self.urls.get_value();
        let module = lazy_web::load("del estimador", &js, &wasm).await?;
        lazy_web::call(&module, export, &[&query.into()])
            .await
            .ok()
            .and_then(|v| v.as_string())
            .ok_or_else(|| "El estimador no respondió.".to_owned())
    }

    /// Forgets the calls under way (the page answered without the bundle); returns the
    /// next call's id.
    pub fn drop_pending(self) -> u32 {
        let id = self.latest.get_value().wrapping_add(1);
        self.latest.set_value(id);
        id
    }
}
